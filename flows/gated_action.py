"""gated_action: propose -> verdict -> (approve) -> execute -> record, as one flow.

The flow is Runtime.call with Prefect's strategies (``flows._runtime``): the Governor
proposes (as a task cached per run), runs the action as its task on EXECUTE, then the
optional ``verify`` call, and records the outcome with the verdict's authorization.
HOLD waits for a person (``flows._approval``): approval executes and records, rejection
or timeout records the refusal. REFUSE ends with the verdict (the kernel laid a FAILURE
signal at the tool). When ``verify`` fails after the action ran, the Governor runs the
rollback action the capability declares and records the outcome as failed. The call is
judged on the tool it runs; ``target`` is context for the gate, never instead of it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from prefect import flow
from prefect.utilities.asyncutils import run_coro_as_sync
from pydantic import BaseModel, ConfigDict, Field

from blocks import load_kernel_settings
from colony.errors import ColonyError
from colony.kernel import GateVerdict, Role
from colony.runtime import CallRequest
from flows._approval import ApprovalInput
from flows._catalog import ToolCall
from flows._runtime import PREFECT_OPERATOR, flow_runtime

__all__ = ["ApprovalInput", "GatedActionRequest", "GatedActionSummary", "Outcome", "gated_action"]


class GatedActionRequest(BaseModel):
    """An agent's request to run one tool action through the gate."""

    model_config = ConfigDict(extra="forbid")

    agent_id: str = Field(min_length=1, description="The proposing agent, e.g. 'engineer-1'.")
    call: ToolCall = Field(description="The tool action to run, with its arguments.")
    target: str | None = Field(
        default=None, description="What the action affects beyond the tool itself (context for the gate)."
    )
    rationale: str = Field(description="Why the action is needed (at least 20 characters).")
    rollback_plan: str = Field(default="", description="How the action would be undone.")
    evidence: dict[str, Any] = Field(default_factory=dict, description="Supporting evidence: tests, PRs, logs.")
    budget_estimate: dict[str, float] | None = Field(
        default=None, description="Expected usage, e.g. {'llm_calls': 1, 'runtime_seconds': 2}."
    )
    verify: ToolCall | None = Field(
        default=None, description="A check run after the action; if it fails, the action is rolled back."
    )
    approval_timeout_seconds: int = Field(
        default=3600, ge=1, description="How long a held action waits for a person before it is refused."
    )
    approval_poll_seconds: int = Field(default=5, ge=1, description="How often a paused run checks for a decision.")


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
    trust_after: float | None = Field(default=None, description="The agent's trust after the outcome.")
    role_after: Role | None = Field(default=None, description="The agent's role after the outcome.")


@flow(name="gated-action")
def gated_action(request: GatedActionRequest) -> GatedActionSummary:
    """Run one tool action through the Colony gate, recording what happened."""
    runtime = flow_runtime(
        load_kernel_settings(),
        approval_timeout_seconds=request.approval_timeout_seconds,
        poll_seconds=request.approval_poll_seconds,
    )
    call = CallRequest(
        tool=request.call.tool,
        arguments=request.call.arguments,
        action=request.call.action,
        agent_id=request.agent_id,
        rationale=request.rationale,
        rollback_plan=request.rollback_plan,
        evidence=request.evidence,
        target=request.target,
        budget_estimate=request.budget_estimate,
    )
    verify = None
    if request.verify is not None:
        check = request.verify

        async def verify(_: Any) -> None:
            checked = CallRequest(
                tool=check.tool, arguments=check.arguments, action=check.action, agent_id=request.agent_id
            )
            (await runtime.call(checked, PREFECT_OPERATOR)).raise_for_status()

    outcome = run_coro_as_sync(runtime.call(call, PREFECT_OPERATOR, verify=verify))
    assert outcome is not None
    record = outcome.record or {}
    return GatedActionSummary(
        outcome=Outcome(outcome.status.value),
        verdict=GateVerdict.model_validate({k: v for k, v in (outcome.verdict or {}).items() if k in _VERDICT_KEYS})
        if outcome.verdict
        else None,
        approval=ApprovalInput(**_approval(outcome.approval)) if (outcome.approval or {}).get("reviewer") else None,
        result=outcome.result,
        error=_error(outcome.error),
        rolled_back=list(outcome.rolled_back),
        consequence_id=record.get("consequence_id"),
        trust_after=record.get("trust_score"),
        role_after=Role(record["role"]) if record.get("role") else None,
    )


_VERDICT_KEYS = set(GateVerdict.model_fields) - {"authorization"}


def _approval(decision: dict[str, Any]) -> dict[str, Any]:
    return {
        "approve": bool(decision.get("approved")),
        "reviewer": decision["reviewer"],
        "note": decision.get("note", ""),
    }


def _error(error: ColonyError | None) -> dict[str, Any] | None:
    return error.to_dict() if error is not None else None
