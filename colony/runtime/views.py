"""What a governed call's outcome shows of the gate: its verdict, its record and its approval request.

Each view is typed for the code that reads it and serialized by one method, ``to_dict``:
the keys it was given, in the order the wire formats (HTTP, MCP, the CLI, an agent's tool
metadata) have always shown them. A key reads as before, too (``outcome.verdict["decision"]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from colony.kernel import Approval, GateVerdict, OutcomeRecord

__all__ = ["ApprovalView", "RecordView", "VerdictView", "wire"]


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_dict(self) -> dict[str, Any]:
        """The wire form: exactly the keys given, as JSON values."""
        return self.model_dump(mode="json", exclude_unset=True)

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]


class VerdictView(_View):
    """The gate's verdict as a caller sees it (never its authorization token)."""

    decision: Literal["execute", "hold", "refuse"]
    gate_score: float = 0.0
    reason: str = ""
    required_evidence: tuple[str, ...] = ()
    budget_approved: bool | None = None
    falsification_severity: float | None = None
    proposal_id: str | None = None
    approval_id: str | None = None
    approved_by: str | None = None

    @classmethod
    def of(cls, verdict: GateVerdict) -> VerdictView:
        """The kernel's verdict: seed 001's keys, its proposal and, for a HOLD, its approval request.

        Read from the kernel's model's attributes (cheaper than dumping it first: a governed call's hot path).
        """
        shown: dict[str, Any] = {
            "decision": verdict.decision.value,
            "gate_score": verdict.gate_score,
            "reason": verdict.reason,
            "required_evidence": tuple(verdict.required_evidence),
            "budget_approved": verdict.budget_approved,
            "falsification_severity": verdict.falsification_severity,
            "proposal_id": verdict.proposal_id,
        }
        if verdict.approval_id is not None:
            shown["approval_id"] = verdict.approval_id
        return cls.model_validate(shown)

    @classmethod
    def held(cls, approval: Approval) -> VerdictView:
        """The verdict of a held call, as its approval request keeps it (a resubmission)."""
        return cls(
            decision="hold",
            gate_score=approval.gate_score,
            reason=approval.reason,
            required_evidence=tuple(approval.required_evidence),
            proposal_id=approval.proposal_id,
            approval_id=approval.approval_id,
        )

    def approved(self, reviewer: str | None) -> VerdictView:
        """A held call a person approved: it runs, so it answers ``execute``, saying who approved."""
        return self.model_copy(update={"decision": "execute", "approved_by": reviewer})


class RecordView(_View):
    """The recorded outcome: the consequence, and the agent's trust and role after it."""

    status: str = "recorded"
    consequence_id: str | None = None
    trust_score: float | None = None
    role: str | None = None
    attested: bool | None = None
    overspent: dict[str, float] | None = None

    @classmethod
    def of(cls, record: OutcomeRecord) -> RecordView:
        """The kernel's record of an outcome the pipeline reported."""
        return cls.model_validate(
            {
                "status": record.status,
                "consequence_id": record.consequence_id,
                "trust_score": record.trust_score,
                "role": record.role.value,
                "attested": record.attested,
                "overspent": record.overspent,
            }
        )


class ApprovalView(_View):
    """A held call's approval request: its state, expiry, reason, decision and, while pending, how to resolve it."""

    approval_id: str
    state: Literal["pending", "approved", "rejected", "expired"]
    expires_at: float
    reason: str
    required_evidence: tuple[str, ...]
    reviewer: str | None
    reviewer_display_name: str | None
    decided_by: str | None
    note: str | None
    approved: bool | None
    resolve: dict[str, str] | None = None

    @classmethod
    def of(cls, approval: Approval, resolve: dict[str, str] | None = None) -> ApprovalView:
        """The kernel's approval request; ``resolve`` (how to resolve it) is shown while it is pending."""
        state = approval.state.value
        shown: dict[str, Any] = {
            "approval_id": approval.approval_id,
            "state": state,
            "expires_at": approval.expires_at,
            "reason": approval.reason,
            "required_evidence": approval.required_evidence,
            "reviewer": approval.reviewer,
            "reviewer_display_name": approval.reviewer_display_name,
            "decided_by": approval.decided_by,
            "note": approval.note,
            "approved": {"approved": True, "rejected": False}.get(state),
        }
        if state == "pending" and resolve is not None:
            shown["resolve"] = resolve
        return cls.model_validate(shown)

    @property
    def pending(self) -> bool:
        """Whether a person has yet to decide."""
        return self.state == "pending"


def wire(view: _View | None) -> dict[str, Any] | None:
    """A view's wire form (``to_dict``), or None: how a surface puts an outcome's optional views on the wire."""
    return view.to_dict() if view is not None else None
