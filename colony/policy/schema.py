"""The Cedar schema of a catalog: who calls (Agent in Group), what (one action per tool action), on what (Tool).

    principal  Agent::"<agent id>"  in Group::"<group>"   operator, role, trust, capabilities
    action     Action::"<tool>.<action>"
    resource   Tool::"<tool>"       policy_tags, side_effecting, governed, domain, locality, version
    context    input (the action's arguments, typed from its input schema), size (the byte length of
               each string argument, the count of each list), time (UTC), target, estimate, acted_by

Policies are validated against it, so a policy naming a field no tool has is an error at load,
not a silent never-match. Only JSON Schema types Cedar can hold are exposed: strings, integers,
booleans, numbers (as ``decimal``), arrays of those (as sets) and objects with declared properties.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

__all__ = [
    "ActionFacts",
    "CedarType",
    "ToolFacts",
    "action_id",
    "catalog_schema",
    "context_type",
    "input_type",
    "size_type",
]

CedarType = dict[str, Any]

_STRING: CedarType = {"type": "String"}
_LONG: CedarType = {"type": "Long"}
_BOOL: CedarType = {"type": "Boolean"}
_DECIMAL: CedarType = {"type": "Extension", "name": "decimal"}


@dataclass(frozen=True)
class ActionFacts:
    """What a policy may know of one action; ``normalize`` validates arguments and fills in their defaults."""

    input_schema: Mapping[str, Any]
    side_effecting: bool
    governed: bool
    normalize: Callable[[Mapping[str, Any]], dict[str, Any]] = dict

    @cached_property
    def input_type(self) -> CedarType:
        """The input schema as a Cedar record, derived once."""
        return input_type(self.input_schema)


@dataclass(frozen=True)
class ToolFacts:
    """What a policy may know of one tool (the runtime reads it from the catalog)."""

    name: str
    version: str
    domain: str
    locality: str
    policy_tags: tuple[str, ...]
    actions: Mapping[str, ActionFacts] = field(default_factory=dict)
    primary: str = ""  # the action a call runs when it names none

    def resource(self, action: str) -> dict[str, Any]:
        """The ``Tool`` entity's attributes for a call of ``action``."""
        facts = self.actions[action]
        return {
            "policy_tags": sorted(self.policy_tags),
            "side_effecting": facts.side_effecting,
            "governed": facts.governed,
            "domain": self.domain,
            "locality": self.locality,
            "version": self.version,
        }


def action_id(tool: str, action: str) -> str:
    """The Cedar action id of ``tool.action``."""
    return f"{tool}.{action}"


def _record(attributes: Mapping[str, CedarType]) -> CedarType:
    return {"type": "Record", "attributes": dict(attributes)}


def _required(kind: CedarType, required: bool = True) -> CedarType:
    return {**kind, "required": required}


def catalog_schema(tools: Iterable[ToolFacts]) -> dict[str, Any]:
    """The Cedar schema (JSON form) of every action of ``tools``."""
    actions: dict[str, Any] = {}
    for tool in tools:
        for name, facts in tool.actions.items():
            actions[action_id(tool.name, name)] = {
                "appliesTo": {
                    "principalTypes": ["Agent"],
                    "resourceTypes": ["Tool"],
                    "context": context_type(facts.input_schema),
                }
            }
    return {
        "": {
            "entityTypes": {
                "Group": {},
                "Agent": {
                    "memberOfTypes": ["Group"],
                    "shape": _record(
                        {
                            "operator": _required(_BOOL),
                            "role": _required(_STRING),
                            "trust": _required(_DECIMAL),
                            "capabilities": _required({"type": "Set", "element": _STRING}),
                        }
                    ),
                },
                "Tool": {
                    "shape": _record(
                        {
                            "policy_tags": _required({"type": "Set", "element": _STRING}),
                            "side_effecting": _required(_BOOL),
                            "governed": _required(_BOOL),
                            "domain": _required(_STRING),
                            "locality": _required(_STRING),
                            "version": _required(_STRING),
                        }
                    ),
                },
            },
            "actions": actions,
        }
    }


def context_type(input_schema: Mapping[str, Any]) -> CedarType:
    """The context of one action: its typed input, their sizes, and what the gate knows."""
    typed = input_type(input_schema)
    return _record(
        {
            "input": _required(typed),
            "size": _required(size_type(typed)),
            "time": _required(
                _record({name: _required(_LONG) for name in ("hour", "minute", "weekday", "epoch")}),
            ),
            "target": _required(_STRING),
            "acted_by": _required(_STRING),
            "estimate": _required(
                _record(
                    {
                        "llm_calls": _required(_DECIMAL),
                        "runtime_seconds": _required(_DECIMAL),
                        "above_default": _required(_BOOL),
                    }
                )
            ),
        }
    )


def input_type(schema: Mapping[str, Any]) -> CedarType:
    """An action's input schema as a Cedar record (properties Cedar cannot type are left out)."""
    kind = _cedar(schema, schema.get("$defs", {}))
    return kind if kind is not None and kind["type"] == "Record" else _record({})


def size_type(kind: CedarType) -> CedarType:
    """The ``context.size`` mirror of a record: a Long for each string and set, records nested."""
    attributes: dict[str, CedarType] = {}
    for name, attribute in kind.get("attributes", {}).items():
        if attribute["type"] in ("String", "Set"):
            attributes[name] = _required(_LONG, attribute.get("required", True))
        elif attribute["type"] == "Record":
            nested = size_type(attribute)
            if nested["attributes"]:
                attributes[name] = _required(nested, attribute.get("required", True))
    return _record(attributes)


def _cedar(node: Any, defs: Mapping[str, Any]) -> CedarType | None:
    """One JSON Schema node as a Cedar type; None when Cedar cannot type it.

    A call is shown as its validated input, defaults filled in at every level, so only an
    argument that may be null is optional (policies test it with ``has``).
    """
    node, _ = _unwrap(node, defs)
    if node is None:
        return None
    if "enum" in node or "const" in node:
        values = node.get("enum", [node.get("const")])
        return _STRING if all(isinstance(value, str) for value in values) else None
    kind = node.get("type")
    if kind == "string":
        return _STRING
    if kind == "integer":
        return _LONG
    if kind == "boolean":
        return _BOOL
    if kind == "number":
        return _DECIMAL
    if kind == "array":
        element = _cedar(node.get("items"), defs)
        return {"type": "Set", "element": element} if element is not None else None
    if kind == "object" and isinstance(node.get("properties"), dict):
        attributes = {}
        for name, child in node["properties"].items():
            typed = _cedar(child, defs)
            if typed is None:
                continue
            resolved, nullable = _unwrap(child, defs)
            null_default = isinstance(resolved, dict) and "default" in resolved and resolved["default"] is None
            attributes[name] = _required(typed, not (nullable or null_default))
        return _record(attributes)
    return None


def _unwrap(node: Any, defs: Mapping[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The node behind ``$ref`` and ``X | None``, and whether it may be null."""
    nullable = False
    for _ in range(32):  # a cycle of references ends here, untyped
        if not isinstance(node, dict):
            return None, nullable
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node = {**defs.get(ref.removeprefix("#/$defs/"), {}), **{k: v for k, v in node.items() if k != "$ref"}}
            continue
        options = node.get("anyOf") or node.get("oneOf")
        if isinstance(options, list):
            real = [option for option in options if not (isinstance(option, dict) and option.get("type") == "null")]
            nullable = nullable or len(real) < len(options)
            if len(real) != 1:
                return None, nullable
            node = {**real[0], **({"default": node["default"]} if "default" in node else {})}
            continue
        kind = node.get("type")
        if isinstance(kind, list):
            real = [item for item in kind if item != "null"]
            nullable = nullable or len(real) < len(kind)
            if len(real) != 1:
                return None, nullable
            node = {**node, "type": real[0]}
        return node, nullable
    return None, nullable
