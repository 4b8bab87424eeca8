"""gated_action: propose -> verdict -> (approve) -> execute -> record, as one flow.

The flow is Runtime.call with Prefect's strategies (``flows._runtime``): the Governor
proposes (as a task cached per run), runs the action as its task on EXECUTE, then the
optional ``verify`` call, and records the outcome with the verdict's authorization.
HOLD waits for a person (``flows._approval``): approval executes and records, rejection
or timeout records the refusal. REFUSE ends with the verdict (the kernel laid a FAILURE
signal at the tool). When ``verify`` fails after the action ran, the Governor runs the
rollback action the capability declares and records the outcome as failed. The call is
judged on the tool it runs; ``target`` is context for the gate, never instead of it.

The run ends in a state named for the outcome (see ``ending``), with the summary as its
result (JSON in Colony's result storage) and a ``gated-action-outcome`` artifact.
"""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.states import State
from prefect.utilities.asyncutils import run_coro_as_sync
from pydantic import BaseModel, ConfigDict, Field

from blocks import load_settings
from colony.errors import ActionRecordedError, ColonyError, VerificationError
from colony.kernel import ColonyKernel, GateVerdict, Role
from colony.runtime import ApprovalView, CallOutcome, CallRequest
from colony.runtime.case import BudgetEstimate, CallerTarget, Evidence, Rationale, RollbackPlan
from flows._approval import ApprovalInput
from flows._catalog import ToolCall
from flows._heartbeat import beating
from flows._report import as_json, finish, leave_expired_pause, publish
from flows._runtime import PREFECT_OPERATOR, flow_runtime
from flows._tracing import traced
from flows.results import GatedActionSummary, Outcome
from tasks.kernel import kernel_for

__all__ = [
    "OUTCOME_ARTIFACT",
    "ApprovalInput",
    "GatedActionRequest",
    "GatedActionSummary",
    "Outcome",
    "ending",
    "gated_action",
]

OUTCOME_ARTIFACT = "gated-action-outcome"


class GatedActionRequest(BaseModel):
    """An agent's request to run one tool action through the gate."""

    model_config = ConfigDict(extra="forbid")

    agent_id: str = Field(min_length=1, description="The proposing agent, e.g. 'engineer-1'.")
    call: ToolCall = Field(description="The tool action to run, with its arguments.")
    target: CallerTarget = None
    rationale: Rationale
    rollback_plan: RollbackPlan = ""
    evidence: Evidence = Field(default_factory=dict)
    budget_estimate: BudgetEstimate = None
    verify: ToolCall | None = Field(
        default=None, description="A check run after the action; if it fails, the action is rolled back."
    )
    approval_timeout_seconds: int = Field(
        default=3600, ge=1, description="How long a held action waits for a person before it is refused."
    )
    approval_poll_seconds: int = Field(default=5, ge=1, description="How often a paused run checks for a decision.")


def ending(summary: GatedActionSummary) -> tuple[str, bool]:
    """The final state's name, and whether it is a success.

    Only an action that ran and stands ends ``Completed`` ("Executed"). Every other outcome
    ends ``Failed``, named for what happened, because the action the caller asked for did
    not happen or did not stand: "Refused" (the gate said no), "Rejected" (a person said no),
    "Expired" (nobody decided in time), "RolledBack" (the check after it failed and the
    declared undo ran), "CheckFailed" (the check failed and nothing undid the action),
    "ToolFailed" (the tool raised or timed out). ``Failed`` rather than ``Cancelled``: a
    cancellation in Prefect means someone stopped the run from outside, while here the run
    itself reached its verdict, so failure alerts and filters on the run's state see it.
    The flow declares no retries, so a ``Failed`` end is final (a retry would re-read the
    cached verdict and end the same way).
    """
    match summary.outcome:
        case Outcome.EXECUTED:
            return "Executed", True
        case Outcome.FAILED if summary.rolled_back:
            return "RolledBack", False
        case Outcome.FAILED if summary.error and summary.error["type"] == VerificationError.__name__:
            return "CheckFailed", False
        case Outcome.FAILED:
            return "ToolFailed", False
        case Outcome.TIMED_OUT:
            return "Expired", False
        case other:
            return other.value.capitalize(), False  # Refused, Rejected, Held


@flow(name="gated-action")
@beating
@traced
def gated_action(request: GatedActionRequest) -> State[GatedActionSummary]:
    """Run one tool action through the Colony gate, recording what happened; the summary is the run's result."""
    settings = load_settings()
    runtime = flow_runtime(
        settings,
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
        # Mapping keys are invariant: the case's Literal keys are handed over as the str keys they are.
        budget_estimate=dict(request.budget_estimate.items()) if request.budget_estimate is not None else None,
    )
    verify = None
    if request.verify is not None:
        check = request.verify

        async def verify(_: Any) -> None:
            checked = CallRequest(
                tool=check.tool, arguments=check.arguments, action=check.action, agent_id=request.agent_id
            )
            (await runtime.call(checked, PREFECT_OPERATOR)).raise_for_status()

    already = None
    try:
        outcome = run_coro_as_sync(runtime.call(call, PREFECT_OPERATOR, verify=verify))
    except ActionRecordedError as recorded:  # a retry of a run that crashed after its record
        summary = _recorded(recorded, kernel_for(settings.kernel), request.agent_id)
        already = "recorded by an earlier start of this run; this start ran nothing"
    else:
        assert outcome is not None
        summary = _summary(outcome, kernel_for(settings.kernel), request.agent_id)
    name, succeeded = ending(summary)
    if summary.outcome is Outcome.TIMED_OUT:
        leave_expired_pause()
    publish(OUTCOME_ARTIFACT, _markdown(summary, name, request), f"{request.call.tool}: {name}")
    message = f"{name}: {already}" if already else _message(summary, name)
    return finish(summary, name=name, message=message, succeeded=succeeded)


def _summary(outcome: CallOutcome, kernel: ColonyKernel, agent_id: str) -> GatedActionSummary:
    record = outcome.record
    consequence = kernel.consequence(record.consequence_id) if record is not None and record.consequence_id else None
    if consequence is not None:
        before: float | None = consequence.trust_before
    else:  # nothing recorded (a refusal): trust did not move
        profile = kernel.find_profile(agent_id)
        before = profile.trust_score if profile else None
    return GatedActionSummary(
        outcome=Outcome(outcome.status.value),
        verdict=GateVerdict.model_validate({k: v for k, v in outcome.verdict.to_dict().items() if k in _VERDICT_KEYS})
        if outcome.verdict is not None
        else None,
        approval=ApprovalInput(**_approval(outcome.approval))
        if outcome.approval is not None and outcome.approval.reviewer
        else None,
        result=outcome.result,
        error=_error(outcome.error),
        rolled_back=list(outcome.rolled_back),
        consequence_id=record.consequence_id if record is not None else None,
        trust_before=before,
        trust_after=record.trust_score if record is not None and record.trust_score is not None else before,
        role_after=Role(record.role) if record is not None and record.role else None,
    )


def _recorded(recorded: ActionRecordedError, kernel: ColonyKernel, agent_id: str) -> GatedActionSummary:
    """The outcome an earlier start of this run recorded; this start ran nothing."""
    consequence = kernel.consequence(recorded.consequence_id)
    assert consequence is not None
    profile = kernel.find_profile(agent_id)
    return GatedActionSummary(
        outcome=Outcome.EXECUTED if consequence.tests_passed else Outcome.FAILED,
        error=None if consequence.tests_passed else recorded.to_dict(),
        consequence_id=consequence.consequence_id,
        trust_before=consequence.trust_before,
        trust_after=consequence.trust_after,
        role_after=profile.role if profile else None,
    )


_VERDICT_KEYS = set(GateVerdict.model_fields) - {"authorization"}


def _message(summary: GatedActionSummary, name: str) -> str:
    if summary.error is not None:
        return f"{name}: {summary.error['message']}"
    if summary.approval is not None:  # "Rejected by ops: why", "Executed: approved by ops: why"
        how = ": approved by" if summary.approval.approve else " by"
        return f"{name}{how} {summary.approval.reviewer}: {summary.approval.note or 'no note'}"
    return f"{name}: {summary.verdict.reason}" if summary.verdict else name


def _markdown(summary: GatedActionSummary, name: str, request: GatedActionRequest) -> str:
    """What a person checking the run needs: the verdict and why, what ran, what was recorded."""
    verdict, approval = summary.verdict, summary.approval
    rows = {
        "outcome": f"**{name}**",
        "agent": request.agent_id,
        "tool": f"{request.call.tool}.{request.call.action or '(primary action)'}",
        "verdict": f"{verdict.decision.value} (gate score {verdict.gate_score:.3f})" if verdict else "none",
        "reason": verdict.reason if verdict else "",
        "approval": f"{'approved' if approval.approve else 'rejected'} by {approval.reviewer}: {approval.note}"
        if approval
        else "none",
        "rolled back": ", ".join(summary.rolled_back) or "nothing",
        "consequence": summary.consequence_id or "none recorded",
        "trust": f"{_trust(summary.trust_before)} -> {_trust(summary.trust_after)}",
        "role after": summary.role_after.value if summary.role_after else "",
    }
    table = "\n".join(f"| {field} | {_cell(value)} |" for field, value in rows.items())
    title, shown = ("Error", summary.error) if summary.error is not None else ("Tool result", summary.result)
    return f"# Gated action: {name}\n\n| | |\n|---|---|\n{table}\n\n## {title}\n\n{as_json(shown)}\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def _trust(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.3f}"


def _approval(decision: ApprovalView) -> dict[str, Any]:
    return {"approve": bool(decision.approved), "reviewer": decision.decided_by, "note": decision.note}


def _error(error: ColonyError | None) -> dict[str, Any] | None:
    return error.to_dict() if error is not None else None
