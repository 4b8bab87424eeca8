"""``from catalog.tool_schemas import get_tool_schema``, as seed 004's troubleshooting sample writes it.

``ToolSchema`` is seed 004's record with its nine fields; ``get_tool_schema(name)`` reads it
from the catalog this process serves, so the seed's sample runs as written. Colony derives the
record from the tool's spec: a tool is registered as a ``ToolCapability`` class in
``.colony/tool-registry.json``, never by adding a ``ToolSchema``.
"""

from dataclasses import dataclass, fields
from typing import Any

from colony.client import UnifiedToolClient
from colony.errors import UnknownToolError

__all__ = ["ToolSchema", "get_tool_schema"]


@dataclass(frozen=True)
class ToolSchema:
    """A tool as seed 004's catalog lists it."""

    tool_id: str
    name: str
    version: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    required_capabilities: list[str]
    policy_tags: list[str]
    deterministic: bool


def get_tool_schema(name: str) -> ToolSchema:
    """The catalog record of tool ``name``; UnknownToolError if this process serves no such tool."""
    records = {record["name"]: record for record in UnifiedToolClient().get_local_toolhost().list_tools()}
    if name not in records:
        raise UnknownToolError(f"unknown tool {name!r}; the catalog has {sorted(records)}")
    return ToolSchema(**{field.name: records[name][field.name] for field in fields(ToolSchema)})
