"""A call and its outcome: what every surface hands the runtime, and what it gets back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from colony.errors import ActionNotExecutedError, ColonyError
from colony.runtime.case import GateCase
from colony.runtime.principal import Acting
from colony.runtime.views import ApprovalView, RecordView, VerdictView, wire

__all__ = ["CallOutcome", "CallRequest", "CallStatus"]


@dataclass(frozen=True, slots=True)
class CallRequest:
    """One tool call, as a surface received it (identity is not part of it: that is the Principal).

    Attributes:
        tool: The tool's catalog name. Only catalog names resolve.
        arguments: The action's arguments (checked to be a JSON object of bounded size).
        action: The action to run; the tool's primary action when None.
        agent_id: The agent the call acts for, when it is not the principal's own
            (operators only).
        rationale: For a governed call: why it is needed (the gate reads it).
        rollback_plan: For a governed call: how it would be undone.
        evidence: For a governed call: supporting evidence (tests, PRs, logs).
        target: Extra context for the gate: what the call affects beyond the tool itself.
        budget_estimate: Expected usage; it can raise the tool's declared cost, never lower it.
        approval_required: A person must approve this call even if the gate would run it
            (an agent spec's ``tool_approval: required``); it makes a pure tool governed too.
        approval_id: Resubmits a held call: once its approval request is approved, the same
            call (same agent, tool, action and arguments) runs, once.
        approval_reason: Why a person must approve it (set by the pipeline from the policies
            that hold it; the reviewer reads it).
        policy: What the operator's policies decided (set by the pipeline, whatever a caller
            put here; the proposal carries it into the audit log).
    """

    tool: str
    arguments: Any = field(default_factory=dict)
    action: str | None = None
    agent_id: str | None = None
    rationale: str | None = None
    rollback_plan: str | None = None
    evidence: Mapping[str, Any] | None = None
    target: str | None = None
    budget_estimate: Mapping[str, float] | None = None
    approval_required: bool = False
    approval_id: str | None = None
    approval_reason: str | None = None
    policy: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        """Read the case as every surface reads it (``GateCase``): ToolInputError naming a field at fault."""
        if not (
            self.rationale is None
            and self.rollback_plan is None
            and self.evidence is None
            and self.target is None
            and self.budget_estimate is None
        ):
            GateCase.read(
                {
                    "rationale": self.rationale,
                    "rollback_plan": self.rollback_plan,
                    "evidence": self.evidence,
                    "target": self.target,
                    "budget_estimate": self.budget_estimate,
                }
            )

    @classmethod
    def with_case(cls, tool: str, arguments: Any, case: GateCase, **fields: Any) -> CallRequest:
        """A call carrying ``case`` (as ``split_case`` or a surface's own model read it)."""
        return cls(tool, arguments, **fields, **case.model_dump(exclude_unset=True))


class CallStatus(StrEnum):
    """How a call ended."""

    EXECUTED = "executed"
    FAILED = "failed"
    REFUSED = "refused"
    HELD = "held"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class CallOutcome:
    """What a call did: the result, and for a governed call the verdict and the recorded outcome.

    Attributes:
        status: How the call ended.
        tool: The tool's name.
        version: The tool's version that answered.
        action: The action that ran (or was refused).
        acting: The agent the call was judged as, and who acted for it.
        result: The action's result (EXECUTED only).
        verdict: The gate's verdict, without its authorization token (governed calls).
        record: The recorded outcome (governed calls that reached the record step).
        error: The failure (FAILED only): the tool's own error.
        approval: A held call's approval request (and while pending, how to approve, reject
            or resubmit it).
        cached: Whether the result is a cache hit of an earlier identical call (Prefect's executor).
        rolled_back: The rollback actions that ran after a failed check.
    """

    status: CallStatus
    tool: str
    version: str
    action: str
    acting: Acting
    result: Any = None
    verdict: VerdictView | None = None
    record: RecordView | None = None
    error: ColonyError | None = None
    approval: ApprovalView | None = None
    cached: bool = False
    rolled_back: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """A verdict, record or approval given in its wire form (a JSON object) is read into its view."""
        if self.verdict is None and self.record is None and self.approval is None:
            return  # a pure call's outcome: nothing to read
        for name, view in (("verdict", VerdictView), ("record", RecordView), ("approval", ApprovalView)):
            value = getattr(self, name)
            if value is not None and isinstance(value, Mapping):
                object.__setattr__(self, name, view.model_validate(value))

    @property
    def governed(self) -> bool:
        """Whether the call passed the gate (a verdict exists)."""
        return self.verdict is not None

    def raise_for_status(self) -> CallOutcome:
        """Return self when the action ran and succeeded; else raise what a caller should see."""
        if self.status is CallStatus.EXECUTED:
            return self
        if self.status is CallStatus.FAILED and self.error is not None:
            raise self.error
        reason = self.verdict.reason if self.verdict is not None else ""
        approval = self.approval
        waits = (
            f"; approval {approval.approval_id} awaits a person" if approval is not None and approval.pending else ""
        )
        verdict = (wire(self.verdict) or {}) | {"status": self.status.value}
        raise ActionNotExecutedError(
            f"{self.tool}.{self.action} was not run for {self.acting.describe()}: {self.status.value}"
            + (f" ({reason})" if reason else "")
            + waits,
            verdict=verdict | ({"approval": approval.to_dict()} if approval is not None else {}),
        )
