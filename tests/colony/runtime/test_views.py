"""A call outcome's verdict, record and approval are typed views whose wire form is what surfaces always answered."""

from __future__ import annotations

import json

from colony.kernel import Approval, ApprovalState, Decision, GateVerdict, OutcomeRecord, Role
from colony.runtime import Acting, ApprovalView, CallOutcome, CallStatus, RecordView, VerdictView, wire
from colony.runtime.held import approval_view, resolution

HOLD = GateVerdict(
    decision=Decision.HOLD,
    gate_score=0.41,
    reason="hold for evidence",
    required_evidence=["tests"],
    budget_approved=True,
    falsification_severity=0.5,
    proposal_id="p-1",
    authorization=None,
    approval_id="a-1",
    approval_expires_at=10.0,
)


def approval(state: ApprovalState, **decided: object) -> Approval:
    return Approval(
        approval_id="a-1",
        proposal_id="p-1",
        agent_id="clerk",
        tool="ledger",
        action="write",
        target="tool:ledger",
        arguments_digest="0" * 64,
        gate_score=0.41,
        findings=[],
        required_evidence=["tests"],
        reason="hold for evidence",
        requested_at=1.0,
        expires_at=10.0,
        state=state,
        **decided,  # type: ignore[arg-type]
    )


def test_a_verdict_shows_the_seed_keys_its_proposal_and_approval_never_its_token() -> None:
    shown = VerdictView.of(HOLD.model_copy(update={"authorization": "secret-token"}))
    assert json.dumps(shown.to_dict()) == json.dumps({**HOLD.seed_dict(), "proposal_id": "p-1", "approval_id": "a-1"})
    assert "secret-token" not in json.dumps(shown.to_dict())
    assert shown.decision == "hold" and shown.required_evidence == ("tests",) and shown["reason"] == "hold for evidence"
    executed = VerdictView.of(HOLD.model_copy(update={"decision": Decision.EXECUTE, "approval_id": None}))
    assert list(executed.to_dict())[-1] == "proposal_id"  # no approval_id key when none was opened


def test_an_approved_hold_answers_execute_naming_who_approved() -> None:
    resumed = VerdictView.held(approval(ApprovalState.APPROVED, reviewer="ops")).approved("ops")
    assert json.dumps(resumed.to_dict()) == json.dumps(
        {
            "decision": "execute",
            "gate_score": 0.41,
            "reason": "hold for evidence",
            "required_evidence": ["tests"],
            "proposal_id": "p-1",
            "approval_id": "a-1",
            "approved_by": "ops",
        }
    )


def test_a_record_is_the_kernels_record_key_for_key() -> None:
    record = OutcomeRecord(consequence_id="c-1", trust_score=0.8, role=Role.REPAIR_ANT, attested=True)
    assert json.dumps(RecordView.of(record).to_dict()) == json.dumps(record.model_dump(mode="json"))
    refused = RecordView(status="recorded", consequence_id="c-2", trust_score=0.5, role="sandbox")
    assert list(refused.to_dict()) == ["status", "consequence_id", "trust_score", "role"]


def test_an_approval_shows_how_to_resolve_it_only_while_pending() -> None:
    pending = approval_view(approval(ApprovalState.PENDING))
    assert pending.pending and pending.to_dict()["resolve"] == resolution("a-1")
    assert list(pending.to_dict()) == [
        "approval_id",
        "state",
        "expires_at",
        "reason",
        "required_evidence",
        "reviewer",
        "reviewer_display_name",
        "decided_by",
        "note",
        "approved",
        "resolve",
    ]
    rejected = approval_view(approval(ApprovalState.REJECTED, reviewer="ops", note="not tonight"))
    assert "resolve" not in rejected.to_dict() and rejected.approved is False and rejected["note"] == "not tonight"


def test_an_outcome_reads_a_wire_form_into_its_view() -> None:
    outcome = CallOutcome(
        CallStatus.EXECUTED,
        "t",
        "1.0.0",
        "a",
        Acting(agent_id="x"),
        verdict={"decision": "execute"},  # type: ignore[arg-type]
    )
    assert isinstance(outcome.verdict, VerdictView) and wire(outcome.verdict) == {"decision": "execute"}
    assert wire(None) is None and isinstance(approval_view(approval(ApprovalState.EXPIRED)), ApprovalView)
