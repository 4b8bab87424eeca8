"""gated_action: propose -> verdict -> (approve) -> execute -> record, as one flow.

EXECUTE runs the tool's action as a task, then an optional ``verify`` call, inside one
Prefect transaction, and records the outcome with the verdict's authorization. HOLD waits
for a person (see ``flows._approval``): approval executes and records, rejection or
timeout records the refusal. REFUSE ends with the verdict (the kernel has laid a FAILURE
signal at the target). When ``verify`` fails after the action ran, the transaction rolls
back, running the rollback action the capability declares, and the outcome is recorded as
failed.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from prefect import flow
from pydantic import BaseModel, ConfigDict, Field

from blocks import load_kernel_settings
from colony.capability import ToolCapability
from colony.kernel import (
    Decision,
    GateVerdict,
    KernelSettings,
    OutcomeRecord,
    ProposeActionRequest,
    RecordOutcomeRequest,
    Role,
)
from flows._approval import ApprovalInput, wait_for_approval
from flows._catalog import ToolCall, resolve_tool
from flows._events import emit_gate_refused, emit_role_changed
from flows._execution import execute
from tasks import action_task
from tasks.kernel import kernel_for, propose, record
from tasks.policy import side_effecting

__all__ = ["ApprovalInput", "GatedActionRequest", "GatedActionSummary", "Outcome", "gated_action"]


class GatedActionRequest(BaseModel):
    """An agent's request to run one tool action through the gate."""

    model_config = ConfigDict(extra="forbid")

    agent_id: str = Field(min_length=1, description="The proposing agent, e.g. 'engineer-1'.")
    call: ToolCall = Field(description="The tool action to run, with its arguments.")
    target: str = Field(min_length=1, description="Dotted module path or file path the action affects.")
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


class GatedActionSummary(BaseModel):
    """What happened to a gated action, for the caller and the Prefect UI."""

    outcome: Outcome = Field(description="How the action ended.")
    verdict: GateVerdict = Field(description="The gate's verdict (its authorization token removed).")
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
    settings = load_kernel_settings()
    capability = resolve_tool(request.call)
    action = request.call.action or capability.primary_action()
    action_task(capability, action)  # an unknown action fails before the gate is asked
    capability.actions()[action].validate_input(request.call.arguments)
    verdict = propose(_proposal(request, capability, action), settings)
    public = verdict.model_copy(update={"authorization": None})
    if verdict.decision is Decision.REFUSE:
        emit_gate_refused(request.agent_id, action, request.target, public.seed_dict())
        return GatedActionSummary(outcome=Outcome.REFUSED, verdict=public)
    approval = None
    if verdict.decision is Decision.HOLD:
        approval = wait_for_approval(request.approval_timeout_seconds, request.approval_poll_seconds)
        if approval is None or not approval.approve:
            return _record_refusal(request, action, public, approval, settings)
    execution = execute(capability, action, request.call.arguments, request.verify)
    report = RecordOutcomeRequest(
        agent_id=request.agent_id,
        action_type=action,
        target=request.target,
        actual_outcome=execution.describe(),
        tests_passed=execution.succeeded,
        human_feedback=1.0 if approval is not None else 0.0,
        runtime_seconds=execution.runtime_seconds,
        llm_calls=float(capability.spec.cost_model.llm_calls),
    )
    outcome = _record(report, verdict.authorization, settings)
    return GatedActionSummary(
        outcome=Outcome.EXECUTED if execution.succeeded else Outcome.FAILED,
        verdict=public,
        approval=approval,
        result=execution.result,
        error=execution.error,
        rolled_back=execution.rolled_back,
        consequence_id=outcome.consequence_id,
        trust_after=outcome.trust_score,
        role_after=outcome.role,
    )


def _proposal(request: GatedActionRequest, capability: type[ToolCapability], action: str) -> ProposeActionRequest:
    evidence = {**request.evidence, "tool": capability.spec.tool_id, "tool_version": capability.spec.version}
    return ProposeActionRequest(
        agent_id=request.agent_id,
        action_type=action,
        target=request.target,
        rationale=request.rationale,
        rollback_plan=request.rollback_plan,
        evidence=json.dumps(evidence, default=str),
        side_effecting=side_effecting(capability, action),
        budget_estimate=request.budget_estimate,
    )


def _record(report: RecordOutcomeRequest, authorization: str | None, settings: KernelSettings) -> OutcomeRecord:
    before = kernel_for(settings).agent_profile(report.agent_id).role
    outcome = record(report, authorization, settings)
    if outcome.role is not before:
        emit_role_changed(report.agent_id, before.value, outcome.role.value, outcome.trust_score)
    return outcome


def _record_refusal(
    request: GatedActionRequest,
    action: str,
    verdict: GateVerdict,
    approval: ApprovalInput | None,
    settings: KernelSettings,
) -> GatedActionSummary:
    if approval is None:
        what, outcome = f"held; nobody decided within {request.approval_timeout_seconds} s", Outcome.TIMED_OUT
    else:
        what, outcome = f"held; rejected by {approval.reviewer}: {approval.note or 'no note'}", Outcome.REJECTED
    report = RecordOutcomeRequest(
        agent_id=request.agent_id,
        action_type=action,
        target=request.target,
        actual_outcome=f"not run: {what}",
        tests_passed=False,
        human_feedback=-1.0 if approval is not None else 0.0,
        runtime_seconds=0.0,
        llm_calls=0.0,
    )
    recorded = _record(report, None, settings)
    emit_gate_refused(request.agent_id, action, request.target, {**verdict.seed_dict(), "outcome": outcome.value})
    return GatedActionSummary(
        outcome=outcome,
        verdict=verdict,
        approval=approval,
        consequence_id=recorded.consequence_id,
        trust_after=recorded.trust_score,
        role_after=recorded.role,
    )
