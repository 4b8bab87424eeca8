"""tool_call: run one tool by name with JSON arguments, validated, cached per determinism."""

from __future__ import annotations

from typing import Any

from prefect import flow
from pydantic import BaseModel, Field

from flows._catalog import ToolCall, resolve_tool
from tasks import action_task

__all__ = ["ToolCall", "ToolCallResult", "tool_call"]


class ToolCallResult(BaseModel):
    """What a tool call returned, and whether it came from the cache."""

    tool: str = Field(description="The tool's name.")
    version: str = Field(description="The tool's version that answered.")
    action: str = Field(description="The action that ran.")
    result: Any = Field(description="The action's result.")
    cached: bool = Field(description="Whether the result is a cache hit of an earlier identical call.")


@flow(name="tool-call", log_prints=False)
def tool_call(call: ToolCall) -> ToolCallResult:
    """Run one tool action; bad arguments fail the run with an error naming each field."""
    capability = resolve_tool(call)
    action = call.action or capability.primary_action()
    state = action_task(capability, action)(arguments=call.arguments, return_state=True)
    result = state.result()
    return ToolCallResult(
        tool=capability.spec.name,
        version=capability.spec.version,
        action=action,
        result=result,
        cached=state.name == "Cached",
    )
