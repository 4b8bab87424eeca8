"""What the Governor builds for a governed call: the proposal, the outcome report and the caller's outcome."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from colony.errors import CallTimeoutError, ColonyError
from colony.runtime.call import CallOutcome, CallRequest, CallStatus
from colony.runtime.catalog import CatalogTool
from colony.runtime.principal import Acting
from colony.runtime.views import ApprovalView, RecordView, VerdictView

__all__ = ["OutcomeDraft", "call_seconds", "estimate_for", "failed_as", "outcome_report", "proposal_for", "ran_as"]


def secret_arguments(schema: dict[str, Any]) -> list[str]:
    """The arguments an input schema declares secret (``writeOnly``, or ``format: password`` as ``SecretStr``).

    A reviewer is shown the arguments with these redacted; the approval still binds their digest.
    """
    properties = schema.get("properties", {})
    return sorted(
        name
        for name, node in properties.items()
        if isinstance(node, dict) and (node.get("writeOnly") is True or node.get("format") == "password")
    )


def proposal_for(
    tool: CatalogTool, action: str, arguments: dict[str, Any], request: CallRequest, acting: Acting
) -> Any:
    """What the kernel is asked: the call judged on the tool it runs, at the risk its spec declares."""
    from colony.kernel import ActionKind, ProposeActionRequest

    spec = tool.cls.spec
    evidence = {
        **dict(request.evidence or {}),
        "tool": spec.name,
        "tool_version": spec.version,
        "arguments": arguments,
    }
    evidence["sandbox"] = tool.cls.isolated  # from the tool's class, never from the caller
    evidence["secret_arguments"] = secret_arguments(tool.cls.actions()[action].input_schema)
    if request.target:
        evidence["caller_target"] = request.target
    if acting.acted_by:
        evidence["acted_by"] = acting.acted_by
    return ProposeActionRequest(
        agent_id=acting.agent_id,
        action_type=action,
        target=spec.tool_id,  # judged on the tool it runs; a caller's target is context only
        rationale=request.rationale or "",
        rollback_plan=request.rollback_plan or "",
        evidence=json.dumps(evidence, default=str),
        side_effecting=True if tool.side_effecting(action) else None,
        kind=ActionKind.DESTRUCTIVE if "destructive" in spec.policy_tags else None,  # the spec says so; never lowers
        budget_estimate=estimate_for(tool, request),
        tool=tool.name,
        require_approval=request.approval_required,
        approval_reason=request.approval_reason,
        acted_by=acting.acted_by,
        policy=dict(request.policy) if request.policy is not None else None,
    )


def outcome_report(outcome: OutcomeDraft, what: str, passed: bool, runtime_seconds: float) -> Any:
    """The outcome report of a call that ran, failed or timed out, taking ``runtime_seconds`` (as measured)."""
    from colony.kernel import RecordOutcomeRequest

    approval = outcome.approval
    approved = approval is not None and bool(approval.approved)
    if approval is not None and approved:
        note = approval.note
        what += f" (approved by {approval.decided_by}{': ' + note if note else ''})"
    return RecordOutcomeRequest(
        agent_id=outcome.acting.agent_id,
        action_type=outcome.action,
        target=f"tool:{outcome.tool}",
        actual_outcome=f"{outcome.tool}.{outcome.action} for {outcome.acting.describe()}: {what}",
        tests_passed=passed,
        human_feedback=(1.0 if approved else -1.0) if approval is not None else 0.0,
        runtime_seconds=runtime_seconds,
    )


@dataclass
class OutcomeDraft:
    """The outcome as it is built up, frozen by ``finish``."""

    tool: str
    action: str
    acting: Acting
    verdict: VerdictView | None
    record: RecordView | None = None
    approval: ApprovalView | None = None
    version: str = ""
    rolled_back: tuple[str, ...] = ()

    def finish(self, status: CallStatus, *, result: Any = None, error: ColonyError | None = None) -> CallOutcome:
        return CallOutcome(
            status=status,
            tool=self.tool,
            version=self.version,
            action=self.action,
            acting=self.acting,
            result=result,
            verdict=self.verdict,
            record=self.record,
            error=error,
            approval=self.approval,
            rolled_back=self.rolled_back,
        )


def call_seconds(tool: CatalogTool, action: str, arguments: dict[str, Any], ceiling: float) -> float:
    """How long the call may run as asked: its own timeout (the tool's reading of it), at most ``ceiling``."""
    own = tool.cls.call_timeout(action, arguments)
    return ceiling if own is None else min(own, ceiling)


def ran_as(result: Any, seconds: float) -> str:
    """How an action that answered is described in its record: stopped at its deadline, or not."""
    stopped = result.get("timed_out") if isinstance(result, dict) else getattr(result, "timed_out", None)
    if stopped is True:
        shown = round(seconds, 2)
        return f"ran until its deadline of {shown:g} s and was killed there (what it did so far is its result)"
    return "executed successfully"


def failed_as(error: ColonyError) -> str:
    """How a failed run is described in its record."""
    return "timed out, and was killed at its deadline" if isinstance(error, CallTimeoutError) else "failed"


def estimate_for(tool: CatalogTool, request: CallRequest) -> dict[str, float]:
    """The tool's declared cost per call; a caller's estimate may raise a dimension, never lower it."""
    spec = tool.cls.spec
    declared = {
        "llm_calls": float(spec.cost_model.llm_calls),
        "runtime_seconds": float(spec.resource_requirements.expected_wallclock_seconds or spec.cost_model.cpu_seconds),
    }
    for name, value in (request.budget_estimate or {}).items():
        if name in declared and isinstance(value, int | float) and not isinstance(value, bool):
            declared[name] = max(declared[name], float(value))
    return declared
