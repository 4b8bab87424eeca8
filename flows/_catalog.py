"""Finding the tool a call names: a catalog name, or the import path of its class."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from colony.capability import ToolCapability
from colony.catalog import get_entry, load_registry, resolve_capability

__all__ = ["ToolCall", "resolve_tool"]


class ToolCall(BaseModel):
    """One call of a tool: which tool, which action, which arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(
        min_length=1,
        description="The tool's catalog name ('unit_convert'), or the import path of its ToolCapability class.",
    )
    action: str | None = Field(default=None, description="The action to run; empty means the tool's main action.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The action's arguments, as a JSON object.")


def resolve_tool(call: ToolCall) -> type[ToolCapability]:
    """The class of the tool ``call`` names, or UnknownToolError / CapabilityResolutionError."""
    entries = load_registry()
    if call.tool in entries or "." not in call.tool:
        return resolve_capability(get_entry(call.tool, entries))
    return resolve_capability(call.tool)
