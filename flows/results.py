"""What the gated-action, tool-call and agent-run runs return: their results, kept as JSON.

A kept result names its class by module and name (Prefect's JSON serializer), and a
worker loads a flow from its file under another module name; defined here, these
classes have one importable name wherever the flow ran, so a caller reading a run's
result back through the API gets the model, not a plain dict.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from colony.kernel import GateVerdict, Role
from flows._approval import ApprovalInput

__all__ = ["AgentRunSummary", "GatedActionSummary", "Outcome", "ToolCallResult"]


class Outcome(StrEnum):
    """How a gated action ended."""

    EXECUTED = "executed"
    FAILED = "failed"
    REFUSED = "refused"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"
    HELD = "held"


class GatedActionSummary(BaseModel):
    """What happened to a gated action, for the caller and the Prefect UI."""

    outcome: Outcome = Field(description="How the action ended.")
    verdict: GateVerdict | None = Field(default=None, description="The gate's verdict (no authorization token).")
    approval: ApprovalInput | None = Field(default=None, description="The person's decision on a held action.")
    result: Any = Field(default=None, description="The tool's result, when it ran and succeeded.")
    error: dict[str, Any] | None = Field(default=None, description="What failed, when something did.")
    rolled_back: list[str] = Field(default_factory=list, description="Rollback actions that ran.")
    consequence_id: str | None = Field(default=None, description="The recorded outcome's id.")
    trust_before: float | None = Field(default=None, description="The agent's trust before the outcome.")
    trust_after: float | None = Field(default=None, description="The agent's trust after the outcome.")
    role_after: Role | None = Field(default=None, description="The agent's role after the outcome.")


class ToolCallResult(BaseModel):
    """What a tool call returned, and whether it came from the cache."""

    tool: str = Field(description="The tool's name.")
    version: str = Field(description="The tool's version that answered.")
    action: str = Field(description="The action that ran.")
    result: Any = Field(description="The action's result.")
    cached: bool = Field(description="Whether the result is a cache hit of an earlier identical call.")
    verdict: dict[str, Any] | None = Field(default=None, description="The gate's verdict, for a governed tool.")


class AgentRunSummary(BaseModel):
    """How an agent run ended: its answer, or the held calls it waits on and how to carry it on."""

    agent: str = Field(description="The agent's name.")
    spec: str = Field(description="The agent spec file the run used.")
    held: bool = Field(description="Whether the run ended waiting for a person.")
    output: str | None = Field(default=None, description="The agent's answer, when it gave one.")
    approvals: list[str] = Field(default_factory=list, description="The approval requests a held run waits on.")
    held_run: dict[str, Any] | None = Field(
        default=None, description="A held run's messages and held calls (a colony.agents.HeldRun, to resume)."
    )
    tool_calls: int = Field(default=0, description="Tool calls the model made in this run.")
