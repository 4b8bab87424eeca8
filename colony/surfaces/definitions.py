"""What each surface serves for a catalog tool, and the hash that pins it.

A tool's served definition is its name, the description its planner card
renders, and its input and output schemas. Every surface builds it here, so
the MCP listing, the enriched catalog and ``colony tools pin`` agree byte for
byte on what an agent was shown.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from colony.capability import ToolCapability
from colony.runtime.catalog import is_governed
from colony.spec import Determinism

__all__ = [
    "GOVERNANCE_PROPERTIES",
    "ToolDefinition",
    "catalog_record",
    "definition_hash",
    "served_definition",
]

GOVERNANCE_PROPERTIES: dict[str, Any] = {
    "rationale": {
        "type": "string",
        "description": "Why this side-effecting call is necessary (shown to the gate; 20+ characters).",
    },
    "rollback_plan": {
        "type": "string",
        "description": "How to undo the call's effect if it goes wrong (the gate asks for one).",
    },
    "evidence": {
        "type": "object",
        "description": "Supporting evidence for the gate: test IDs under 'tests', PR URLs, error logs.",
    },
}
_VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The gate's verdict on this call (colony_propose_action's output).",
}


@dataclass(frozen=True)
class ToolDefinition:
    """One tool as an MCP client sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    side_effecting: bool

    @property
    def sha256(self) -> str:
        """The definition's pin (see ``definition_hash``)."""
        return definition_hash(self)


def definition_hash(definition: ToolDefinition) -> str:
    """A stable hash of what an agent reads: name, description and both schemas."""
    document = {
        "name": definition.name,
        "description": definition.description,
        "input_schema": definition.input_schema,
        "output_schema": definition.output_schema,
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_served: dict[type[ToolCapability], ToolDefinition] = {}


def served_definition(cls: type[ToolCapability]) -> ToolDefinition:
    """The definition served for ``cls``'s primary action, built once per class (see ``_definition``)."""
    definition = _served.get(cls)
    if definition is None:
        definition = _served[cls] = _definition(cls)
    return definition


def _definition(cls: type[ToolCapability]) -> ToolDefinition:
    """The definition served for ``cls``'s primary action.

    For a side-effecting tool the input schema gains the ``rationale``,
    ``rollback_plan`` and ``evidence`` the gate reads, and the tool answers with
    its verdict beside its result. Identity is never an argument: it comes from
    authentication.
    """
    spec = cls.spec
    capability = cls()
    action = cls.primary_action()
    menu = {entry.action: entry for entry in capability.get_action_descriptions()}
    entry = menu[action]
    side_effecting = capability.action_side_effecting(action)
    governed = is_governed(cls, action)
    added = GOVERNANCE_PROPERTIES if governed else {}
    schema = dict(entry.input_schema)
    properties = dict(schema.get("properties", {}))
    for name, value in added.items():
        properties.setdefault(name, value)
    schema["properties"] = properties
    output = _output_schema(cls)
    if governed:
        output = {
            "type": "object",
            "properties": {"verdict": _VERDICT_SCHEMA, "result": output or {}, "outcome": {"type": "object"}},
            "required": ["verdict", "result"],
        }
    idempotent = cls.actions()[action].idempotent
    return ToolDefinition(
        name=spec.name,
        description=entry.description,
        input_schema=schema,
        output_schema=output,
        annotations={
            "title": spec.name,
            "read_only_hint": not side_effecting,
            "destructive_hint": side_effecting,
            "idempotent_hint": (not side_effecting or bool(idempotent))
            and spec.determinism is Determinism.DETERMINISTIC,
            "open_world_hint": "no_network" not in spec.policy_tags,
        },
        side_effecting=side_effecting,
    )


def _output_schema(cls: type[ToolCapability]) -> dict[str, Any] | None:
    """The declared output schema, when it describes a JSON object (MCP's structured content)."""
    schema = cls.spec.outputs_schema
    return schema if schema is not None and schema.get("type") == "object" else None


def catalog_record(cls: type[ToolCapability]) -> dict[str, Any]:
    """The tool as seed 004's catalog lists it (a ToolSchema record)."""
    spec = cls.spec
    action = cls.primary_action()
    return {
        "tool_id": spec.tool_id,
        "name": spec.name,
        "version": spec.version,
        "description": spec.description,
        "input_schema": cls.actions()[action].input_schema,
        "output_schema": spec.outputs_schema,
        "required_capabilities": list(spec.required_capabilities),
        "required_capability": spec.required_capabilities[0],
        "policy_tags": list(spec.policy_tags),
        "deterministic": spec.deterministic,
        "side_effecting": served_definition(cls).side_effecting,
    }
