"""What each surface serves for a tool, and the hash that pins it.

A tool's served definition is its name, the description its planner card
renders, and its input and output schemas. Every surface builds it here, so
the MCP listing, the enriched catalog and ``colony tools pin`` agree byte for
byte on what an agent was shown. Schemas are served in their portable form
(``portable_schema``), so every MCP client reads them alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from mcp_types import ToolAnnotations

from colony.capability import ToolCapability
from colony.runtime.case import GOVERNANCE_PROPERTIES
from colony.runtime.catalog import UnavailableTool
from colony.spec import Determinism
from colony.surfaces.kernel_tools import KernelTool, kernel_tools
from colony.surfaces.portable_schema import ANY_JSON, portable_schema

__all__ = [
    "GOVERNANCE_PROPERTIES",
    "ToolDefinition",
    "catalog_record",
    "definition_hash",
    "kernel_definition",
    "served_definition",
    "unavailable_record",
]


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
    def title(self) -> str:
        """A human-readable name for listings (the annotations' title, else the name)."""
        return str(self.annotations.get("title") or self.name)

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
    ``rollback_plan`` and ``evidence`` the gate reads, and the output is the
    gate's verdict beside the tool's result and the recorded outcome. Identity
    is never an argument: it comes from authentication.
    """
    spec = cls.spec
    capability = cls()
    action = cls.primary_action()
    menu = {entry.action: entry for entry in capability.get_action_descriptions()}
    entry = menu[action]
    side_effecting = capability.action_side_effecting(action)
    governed = cls.actions()[action].governed
    added = GOVERNANCE_PROPERTIES if governed else {}
    schema = dict(entry.input_schema)
    properties = dict(schema.get("properties", {}))
    for name, value in added.items():
        properties.setdefault(name, value)
    schema["properties"] = properties
    output = _output_schema(cls)
    if governed:
        output = _governed_output(output)
    idempotent = cls.actions()[action].idempotent
    return ToolDefinition(
        name=spec.name,
        description=entry.description,
        input_schema=portable_schema(schema),
        output_schema=portable_schema(output) if output is not None else None,
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


def kernel_definition(tool: KernelTool) -> ToolDefinition:
    """The definition served for a ``colony_*`` tool: the seed's text and schemas, in portable form."""
    output = tool.structured_output_schema
    annotations = ToolAnnotations.model_validate({**tool.annotations, "title": tool.title})
    return ToolDefinition(
        name=tool.name,
        description=tool.description,
        input_schema=portable_schema(tool.input_schema),
        output_schema=portable_schema(output) if output is not None else None,
        annotations=annotations.model_dump(exclude_none=True),
        side_effecting=not annotations.read_only_hint,
    )


def _output_schema(cls: type[ToolCapability]) -> dict[str, Any] | None:
    """The declared output schema, when it describes a JSON object (MCP's structured content)."""
    schema = cls.spec.outputs_schema
    return schema if schema is not None and schema.get("type") == "object" else None


def _governed_output(result: dict[str, Any] | None) -> dict[str, Any]:
    """A governed call's answer: the verdict (seed 001's proposal output), the result, the recorded outcome."""
    kernel = kernel_tools()
    verdict = _without_error(kernel["colony_propose_action"].output_schema)
    outcome = _without_error(kernel["colony_record_outcome"].output_schema)
    return {
        "type": "object",
        "properties": {
            "verdict": {**verdict, "description": "The gate's verdict on this call (colony_propose_action's output)."},
            "result": result or {**ANY_JSON, "description": "The tool's result."},
            "outcome": {**outcome, "description": "The recorded outcome (colony_record_outcome's output)."},
        },
        "required": ["verdict", "result"],
    }


def _without_error(schema: dict[str, Any]) -> dict[str, Any]:
    """A kernel tool's output schema without the seed's ``error`` member: a governed answer never carries one."""
    properties = {name: value for name, value in schema.get("properties", {}).items() if name != "error"}
    return {**schema, "properties": properties}


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


def unavailable_record(tool: UnavailableTool) -> dict[str, Any]:
    """A catalog entry that failed to load, as the listings show it: which one, and why."""
    return {
        "tool_id": f"tool:{tool.name}",
        "name": tool.name,
        "purpose": tool.entry.purpose,
        "available": False,
        "reason": tool.reason,
    }
