"""A call as Cedar sees it: the principal and tool entities, the action, the context.

Values follow the schema (schema.py) exactly: an argument the schema leaves out is left out
here too, so a policy never reads a value its validation did not type.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from colony.errors import FieldError, ToolInputError
from colony.policy.schema import CedarType, ToolFacts, action_id, size_type

__all__ = [
    "CONTEXT_ATTRIBUTES",
    "CedarCall",
    "Who",
    "call_context",
    "cedar_value",
    "compact_json",
    "sizes",
    "time_context",
    "tool_entity",
]

compact_json = json.JSONEncoder(separators=(",", ":")).encode
"""JSON without spaces, as Cedar is shown it and calls are keyed (one encoder: ``json.dumps`` builds one per call)."""

_LONG_MAX = 2**63 - 1
_DECIMAL_MAX = 922337203685477


@dataclass(frozen=True)
class Who:
    """The principal as policies see it: the agent a call is judged as and what authentication said."""

    agent_id: str
    operator: bool = False
    groups: frozenset[str] = frozenset()
    capabilities: frozenset[str] = frozenset()
    role: str = ""
    trust: float = 0.0


@dataclass(frozen=True)
class CedarCall:
    """One Cedar request: who, which tool and action, the tool's attributes and the context."""

    who: Who
    tool: str
    action: str  # the Cedar action id, ``tool.action``
    resource: Mapping[str, Any]
    context: dict[str, Any]

    @classmethod
    def build(
        cls, who: Who, tool: str, action: str, resource: Mapping[str, Any], context: Mapping[str, Any]
    ) -> CedarCall:
        return cls(who, tool, action_id(tool, action), resource, dict(context))

    def request(self, context: str | None = None) -> dict[str, Any]:
        """The request as Cedar reads it: the context as given, or ``context`` (its JSON, as shown)."""
        return {
            "principal": {"type": "Agent", "id": self.who.agent_id},
            "action": {"type": "Action", "id": self.action},
            "resource": {"type": "Tool", "id": self.tool},
            "context": self.context if context is None else context,
        }

    def entities(self) -> list[dict[str, Any]]:
        """The principal (in its groups), its groups and the tool, as Cedar entities."""
        who = self.who
        groups = sorted(who.groups)
        return [
            {
                "uid": {"type": "Agent", "id": who.agent_id},
                "attrs": {
                    "operator": who.operator,
                    "role": who.role,
                    "trust": _decimal(who.trust, "trust", exact=False),
                    "capabilities": sorted(who.capabilities),
                },
                "parents": [{"type": "Group", "id": group} for group in groups],
            },
            *({"uid": {"type": "Group", "id": group}, "attrs": {}, "parents": []} for group in groups),
            tool_entity(self.tool, self.resource),
        ]


def tool_entity(tool: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Tool`` entity of ``tool`` with these attributes (tools have no parents)."""
    return {"uid": {"type": "Tool", "id": tool}, "attrs": dict(attributes), "parents": []}


def time_context(now: float | None = None) -> dict[str, int]:
    """The call's time in UTC to the minute (``weekday`` 0 is Monday)."""
    if now is None:
        return _this_minute()
    moment = time.gmtime(now)
    epoch = int(now) // 60 * 60
    return {"hour": moment.tm_hour, "minute": moment.tm_min, "weekday": moment.tm_wday, "epoch": epoch}


def cedar_value(value: Any, kind: CedarType, where: str) -> Any:
    """``value`` as the Cedar JSON of ``kind``; ToolInputError naming ``where`` when it cannot be."""
    tag = kind["type"]
    if tag == "Record":
        if not isinstance(value, Mapping):
            raise _untypable(where, "an object")
        record = {}
        for name, attribute in kind["attributes"].items():
            item = value.get(name)
            if item is not None:
                record[name] = cedar_value(item, attribute, f"{where}.{name}")
            elif attribute.get("required", True):
                raise _untypable(f"{where}.{name}", "a value (the argument is missing)")
        return record
    if tag == "String" and isinstance(value, str):
        return value
    if tag == "Boolean" and isinstance(value, bool):
        return value
    if tag == "Long" and _integral(value) and abs(int(value)) <= _LONG_MAX:
        return int(value)
    if tag == "Extension" and isinstance(value, int | float) and not isinstance(value, bool):
        return _decimal(value, where)
    if tag == "Set" and isinstance(value, list | tuple):
        return [cedar_value(item, kind["element"], f"{where}[]") for item in value]
    raise _untypable(where, tag.lower())


def sizes(value: Mapping[str, Any], kind: CedarType) -> dict[str, Any]:
    """The ``context.size`` of a converted input: UTF-8 bytes of each string, the count of each set."""
    found: dict[str, Any] = {}
    for name, attribute in kind["attributes"].items():
        if name not in value:
            continue
        item = value[name]
        if attribute["type"] == "String":
            found[name] = len(item.encode("utf-8"))
        elif attribute["type"] == "Set":
            found[name] = len(item)
        elif attribute["type"] == "Record" and size_type(attribute)["attributes"]:
            found[name] = sizes(item, attribute)
    return found


def _integral(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _decimal(value: float, where: str, *, exact: bool = True) -> dict[str, Any]:
    """``value`` as a Cedar decimal (four places); a caller's number must fit them, not be rounded.

    Rounded, ``100.00004`` would pass a policy's ``amount > 100.0`` while the tool received more:
    a caller's number with a fifth decimal place (beyond a float's own noise) is refused instead.
    ``exact=False`` rounds a value Colony measured itself (an agent's trust).
    """
    if not abs(value) <= _DECIMAL_MAX:  # also NaN
        raise _untypable(where, "a number a policy can compare (a Cedar decimal)")
    shown = round(value, 4)
    if exact and abs(value - shown) > 1e-9 * max(1.0, abs(value)):
        raise _untypable(where, "a number of at most four decimal places (what a policy compares)")
    return {"__extn": {"fn": "decimal", "arg": f"{shown:.4f}"}}


def _untypable(where: str, expected: str) -> ToolInputError:
    message = f"{where} cannot be shown to the operator's policies as {expected}"
    return ToolInputError(message, errors=[FieldError(field=where, message=message, expected=expected)])


def call_context(
    facts: ToolFacts,
    action: str,
    arguments: Mapping[str, Any],
    *,
    target: str | None,
    acted_by: str | None,
    estimate: Mapping[str, float],
    above_default: bool,
    now: float | None = None,
    reads: frozenset[str] | None = None,
) -> dict[str, Any]:
    """The context of a call of ``facts.action``: its arguments as the schema types them, and what the gate knows.

    Only the attributes in ``reads`` (all when None) are built: what no applicable policy reads
    cannot change a decision, and leaving it out keeps the evaluation and its cache key small.
    """
    context: dict[str, Any] = {}
    wanted = CONTEXT_ATTRIBUTES if reads is None else reads
    if "input" in wanted or "size" in wanted:
        definition = facts.actions[action]
        kind = definition.input_type
        typed = cedar_value(definition.normalize(arguments), kind, "input")
        if "input" in wanted:
            context["input"] = typed
        if "size" in wanted:
            context["size"] = sizes(typed, kind)
    if "time" in wanted:
        context["time"] = time_context(now)
    if "target" in wanted:
        context["target"] = target or ""
    if "acted_by" in wanted:
        context["acted_by"] = acted_by or ""
    if "estimate" in wanted:
        context["estimate"] = {
            "llm_calls": _decimal(float(estimate.get("llm_calls", 0.0)), "estimate.llm_calls"),
            "runtime_seconds": _decimal(float(estimate.get("runtime_seconds", 0.0)), "estimate.runtime_seconds"),
            "above_default": above_default,
        }
    return context


CONTEXT_ATTRIBUTES = frozenset({"input", "size", "time", "target", "acted_by", "estimate"})
_minute: list[Any] = [None, None]  # the minute last shown, and its context


def _this_minute() -> dict[str, int]:
    now = time.time()
    minute = int(now) // 60
    if _minute[0] != minute:
        _minute[1], _minute[0] = time_context(now), minute
    return dict(_minute[1])
