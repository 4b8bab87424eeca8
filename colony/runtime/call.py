"""A call and its outcome: what every surface hands the runtime, and what it gets back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from colony.errors import ActionNotExecutedError, ColonyError
from colony.runtime.principal import Acting

__all__ = ["GOVERNANCE_PROPERTIES", "CallOutcome", "CallRequest", "CallStatus"]

#: The case a governed call carries to the gate, as JSON Schema properties: every surface that
#: serves a governed tool (MCP, the gateway, an agent's toolset) adds these to its input schema.
GOVERNANCE_PROPERTIES: dict[str, Any] = {
    "rationale": {
        "type": "string",
        "description": "Why this side-effecting call is necessary (shown to the gate; 20+ characters).",
    },
    "rollback_plan": {
        "type": "string",
        "description": "How to undo the call's effect if it goes wrong (the gate asks for one).",
    },
    "evidence": {
        "type": "object",
        "description": "Supporting evidence for the gate: test IDs under 'tests', PR URLs, error logs.",
    },
}


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
        approval: A held call's approval request (``approval_id``, ``state``, ``expires_at``,
            ``reason``, ``required_evidence``, ``reviewer``, ``note``, ``approved``, and while
            pending ``resolve``: how to approve, reject or resubmit it).
        cached: Whether the result is a cache hit of an earlier identical call (Prefect's executor).
        rolled_back: The rollback actions that ran after a failed check.
    """

    status: CallStatus
    tool: str
    version: str
    action: str
    acting: Acting
    result: Any = None
    verdict: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    error: ColonyError | None = None
    approval: dict[str, Any] | None = None
    cached: bool = False
    rolled_back: tuple[str, ...] = ()

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
        reason = (self.verdict or {}).get("reason", "")
        pending = self.approval is not None and self.approval.get("state") == "pending"
        raise ActionNotExecutedError(
            f"{self.tool}.{self.action} was not run for {self.acting.describe()}: {self.status.value}"
            + (f" ({reason})" if reason else "")
            + (f"; approval {self.approval['approval_id']} awaits a person" if pending else ""),  # type: ignore[index]
            verdict={**(self.verdict or {}), "status": self.status.value}
            | ({"approval": self.approval} if self.approval else {}),
        )
