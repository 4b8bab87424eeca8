"""Approval requests: a HOLD opens one; approve authorizes once, reject and expiry record a refusal."""

from __future__ import annotations

import json
import multiprocessing
import time

import pytest

from colony.errors import ApprovalError, AttestationError, KernelInputError, UnknownApprovalError
from colony.kernel import (
    ApprovalState,
    AttestationMode,
    ColonyKernel,
    ConsequenceKind,
    Decision,
    KernelSettings,
    SignalType,
    arguments_digest,
)
from tests.colony.kernel.conftest import FakeClock, good_plan
from tests.colony.kernel.workers import claim_approved, decide_approval

ARGUMENTS = {"path": "pkg/parser.py", "line": 3}


def held_plan(**overrides: object) -> dict[str, object]:
    """A plan the gate would run, held because a person must approve it."""
    evidence = json.dumps({"tests": ["tests/test_parser.py::test_slash"], "arguments": ARGUMENTS})
    return good_plan(evidence=evidence, tool="files", require_approval=True, **overrides)


def hold(kernel: ColonyKernel, agent: str = "engineer-1") -> str:
    kernel.set_trust(agent, 0.6)
    verdict = kernel.propose_action(held_plan(agent_id=agent))
    assert verdict.decision is Decision.HOLD, verdict.reason
    assert verdict.approval_id is not None
    return verdict.approval_id


def claim(  # type: ignore[no-untyped-def]
    kernel: ColonyKernel,
    approval_id: str,
    agent: str = "engineer-1",
    arguments: object = ARGUMENTS,
    target: str = "pkg.parser",
):
    return kernel.claim_approval(
        approval_id,
        agent_id=agent,
        tool="files",
        target=target,
        action="patch_file",
        arguments_digest=arguments_digest(arguments),
    )


def assert_counts_consistent(kernel: ColonyKernel, agent: str = "engineer-1") -> None:
    counts = kernel.proposal_counts(agent)
    assert counts.total == counts.accepted + counts.rejected + counts.held


def test_a_hold_opens_a_pending_request_with_what_a_reviewer_needs(kernel: ColonyKernel, clock: FakeClock) -> None:
    approval = kernel.get_approval(hold(kernel))
    assert approval.state is ApprovalState.PENDING
    assert (approval.agent_id, approval.tool, approval.action, approval.target) == (
        "engineer-1",
        "files",
        "patch_file",
        "pkg.parser",
    )
    assert approval.arguments_digest == arguments_digest({"line": 3, "path": "pkg/parser.py"})
    assert "a person must approve" in approval.reason
    assert "human_approval" in approval.required_evidence
    assert approval.requested_at == clock.now
    assert approval.expires_at == clock.now + 3600.0
    assert kernel.proposal_counts("engineer-1").held == 1
    assert [a.approval_id for a in kernel.list_approvals(state="pending")] == [approval.approval_id]


def test_execute_and_refuse_open_no_request(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.6)
    assert kernel.propose_action(good_plan()).approval_id is None
    assert kernel.propose_action(good_plan(agent_id="newbie")).approval_id is None  # SANDBOX: refused
    assert kernel.list_approvals() == []


def test_approve_issues_a_one_time_authorization_bound_to_the_proposal(kernel: ColonyKernel) -> None:
    approval_id = hold(kernel)
    approved = kernel.approve(approval_id, "reviewer@example.org", "looks right")
    assert (approved.state, approved.reviewer, approved.note) == (
        ApprovalState.APPROVED,
        "reviewer@example.org",
        "looks right",
    )
    assert kernel.status().budget_usage["llm_calls"].reserved == 1.0  # reserved on approval, not on HOLD

    granted = claim(kernel, approval_id)
    assert granted.authorization is not None and granted.approval.executed_at is not None
    with pytest.raises(ApprovalError, match="already executed"):
        claim(kernel, approval_id)

    report = {"agent_id": "engineer-1", "action_type": "patch_file", "target": "pkg.parser",
              "actual_outcome": "patched", "tests_passed": True}  # fmt: skip
    record = kernel.record_outcome(report, authorization=granted.authorization)
    assert record.attested
    with pytest.raises(AttestationError, match="already used"):
        kernel.record_outcome(report, authorization=granted.authorization)
    counts = kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.accepted, counts.held) == (1, 1, 0)


def test_attestation_required_works_on_the_approved_path(colony_home, clock: FakeClock) -> None:  # type: ignore[no-untyped-def]
    kernel = ColonyKernel(KernelSettings(home=colony_home, attestation=AttestationMode.REQUIRED), clock=clock)
    try:
        approval_id = hold(kernel)
        kernel.approve(approval_id, "ops", "")
        granted = claim(kernel, approval_id)
        report = {"agent_id": "engineer-1", "action_type": "patch_file", "target": "pkg.parser",
                  "actual_outcome": "patched", "tests_passed": True}  # fmt: skip
        assert kernel.record_outcome(report, authorization=granted.authorization).attested
    finally:
        kernel.close()


def test_reject_records_a_refusal(kernel: ColonyKernel) -> None:
    approval_id = hold(kernel)
    before = kernel.find_profile("engineer-1")
    assert before is not None
    rejected = kernel.reject(approval_id, "ops", "not on a Friday")
    assert rejected.state is ApprovalState.REJECTED
    log = kernel.consequence_log("engineer-1")
    assert log[-1].kind is ConsequenceKind.REJECTION and log[-1].human_feedback == -1.0
    assert "rejected by ops: not on a Friday" in log[-1].actual_outcome
    assert log[-1].trust_after < before.trust_score
    assert kernel.consequence_of(rejected.proposal_id) == log[-1]
    counts = kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.rejected, counts.held) == (1, 1, 0)
    assert kernel.pheromone_query("pkg.parser", SignalType.FAILURE)
    with pytest.raises(ApprovalError, match="already rejected by ops"):
        kernel.approve(approval_id, "ops", "")
    with pytest.raises(ApprovalError, match="rejected, not approved"):
        claim(kernel, approval_id)


def test_the_tick_expires_overdue_requests_once(kernel: ColonyKernel, clock: FakeClock) -> None:
    approval_id = hold(kernel)
    clock.advance(3600.0)
    kernel.tick("run-1")
    assert kernel.get_approval(approval_id).state is ApprovalState.EXPIRED
    kernel.tick("run-1")
    kernel.tick()
    expiries = [c for c in kernel.consequence_log("engineer-1") if c.kind is ConsequenceKind.EXPIRY]
    assert len(expiries) == 1 and expiries[0].human_feedback == 0.0
    counts = kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.rejected, counts.held) == (1, 1, 0)


def test_approving_an_overdue_request_records_its_expiry_and_fails(kernel: ColonyKernel, clock: FakeClock) -> None:
    approval_id = hold(kernel)
    clock.advance(3601.0)
    with pytest.raises(ApprovalError, match="expired") as raised:
        kernel.approve(approval_id, "ops", "")
    assert raised.value.state == "expired"
    assert kernel.get_approval(approval_id).state is ApprovalState.EXPIRED
    assert_counts_consistent(kernel)


def test_an_approved_call_not_run_in_time_lapses(kernel: ColonyKernel, clock: FakeClock) -> None:
    approval_id = hold(kernel)
    kernel.approve(approval_id, "ops", "")
    clock.advance(3601.0)
    kernel.tick()
    with pytest.raises(ApprovalError, match="lapsed"):
        claim(kernel, approval_id)
    counts = kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.rejected, counts.held) == (1, 1, 0)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"agent": "intruder"}, "agent_id"),
        ({"arguments": {"path": "/etc/passwd", "line": 3}}, "arguments"),
        ({"target": "tool:files"}, "target"),  # a call judged on another target than the approved plan's
    ],
)
def test_a_claim_must_match_the_approved_call(kernel: ColonyKernel, change: dict, field: str) -> None:  # type: ignore[type-arg]
    approval_id = hold(kernel)
    kernel.approve(approval_id, "ops", "")
    with pytest.raises(ApprovalError, match=f"its {field} differs"):
        claim(kernel, approval_id, **change)
    assert claim(kernel, approval_id).approval.executed_at is not None  # the real call still can


def test_unknown_ids_and_bad_input_are_named(kernel: ColonyKernel) -> None:
    with pytest.raises(UnknownApprovalError):
        kernel.get_approval("no-such-id")
    with pytest.raises(UnknownApprovalError):
        kernel.approve("no-such-id", "ops", "")
    with pytest.raises(KernelInputError) as raised:
        kernel.approve("x", "", "")
    assert raised.value.fields == ["reviewer"]
    with pytest.raises(KernelInputError) as raised:
        kernel.list_approvals(state="maybe")
    assert raised.value.fields == ["state"]
    with pytest.raises(KernelInputError) as raised:
        kernel.reject("x", "ops", "a\x00b")
    assert raised.value.fields == ["note"]


def test_a_flow_run_can_be_attached(kernel: ColonyKernel) -> None:
    approval_id = hold(kernel)
    assert kernel.attach_flow_run(approval_id, "run-123").flow_run_id == "run-123"


@pytest.mark.parametrize("approve", [True, False], ids=["approvers", "approver-and-rejecter"])
def test_racing_reviewers_in_processes_decide_once(database_url: str, approve: bool) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url, attestation_secret="shared-test-key"))
    try:
        approval_id = hold(kernel)
        start = time.time() + 0.5
        args = [(database_url, approval_id, f"reviewer-{n}", approve or n % 2 == 0, start) for n in range(4)]
        with multiprocessing.get_context("fork").Pool(4) as pool:
            results = pool.starmap(decide_approval, args)
        decided = [r for r in results if not r.startswith("error:")]
        assert len(decided) == 1, results
        final = kernel.get_approval(approval_id)
        assert final.state.value == decided[0]
        assert all(r == f"error:{final.state.value}" for r in results if r.startswith("error:"))
        log = kernel.consequence_log("engineer-1")
        assert len(log) == (0 if final.state is ApprovalState.APPROVED else 1)
        assert_counts_consistent(kernel)
    finally:
        kernel.close()


def test_racing_resubmissions_in_processes_claim_once(database_url: str) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url, attestation_secret="shared-test-key"))
    try:
        approval_id = hold(kernel)
        kernel.approve(approval_id, "ops", "")
        start = time.time() + 0.5
        args = [(database_url, approval_id, arguments_digest(ARGUMENTS), start) for _ in range(4)]
        with multiprocessing.get_context("fork").Pool(4) as pool:
            results = pool.starmap(claim_approved, args)
        assert sorted(results) == ["claimed", "error:approved", "error:approved", "error:approved"]
    finally:
        kernel.close()
