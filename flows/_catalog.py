"""One call of a catalog tool, as flows take it: which tool, which action, which arguments."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ToolCall"]


class ToolCall(BaseModel):
    """One call of a tool: which tool, which action, which arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(
        min_length=1, max_length=200, description="The tool's catalog name, e.g. 'unit_convert' (names only)."
    )
    action: str | None = Field(default=None, description="The action to run; empty means the tool's main action.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The action's arguments, as a JSON object.")
