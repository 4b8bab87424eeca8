"""Attacks on approvals: a held call runs only as approved, once, for the agent that asked, decided by someone else.

Each attack goes through the real pipeline (Runtime.call over a real kernel) or the
kernel access checks every surface uses, and must leave the side effect undone.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from colony.errors import (
    ApprovalError,
    AttestationError,
    CapabilityDeniedError,
    IdentityError,
    ToolInputError,
)
from colony.kernel import (
    ApprovalClaim,
    ApprovalState,
    ColonyKernel,
    Decision,
    KernelSettings,
    ProposeActionRequest,
    Reporter,
    SignalType,
    arguments_digest,
)
from colony.kernel.approvals import DECIDE_PENDING, LIST_LIMIT
from colony.runtime import CallRequest, CallStatus, Catalog, KernelProvider, Principal, Runtime
from colony.runtime.kernel_access import authorize_approval_decision, outcome_reporter
from colony.surfaces.approval_tools import call_approval_tool, may_list
from colony.surfaces.kernel_tools import call_kernel_tool
from tests.colony.kernel.conftest import FakeClock, database_url  # noqa: F401 - a fixture
from tests.colony.runtime.conftest import write_registry

OWNER = Principal.of("engineer-1", ["tool:*", "kernel:read", "kernel:approve"])
OTHER = Principal.of("engineer-2", ["tool:*", "kernel:read"])
OPERATOR = Principal.of("ops", ["*"], operator=True)
CASE = {
    "rationale": "Record the nightly figures in the ledger for the audit trail",
    "rollback_plan": "erase_entry removes the written file again",
    "evidence": {"tests": ["tests/test_ledger.py::test_write"]},
}


class Setup:
    def __init__(self, runtime: Runtime, kernel: ColonyKernel, clock: FakeClock, root: Path) -> None:
        self.runtime, self.kernel, self.clock, self.root = runtime, kernel, clock, root
        self.entry = root / "entry"

    def request(self, **changes: object) -> CallRequest:
        fields: dict[str, object] = {"arguments": {"path": str(self.entry), "text": "figures"}, **CASE}
        return CallRequest("ledger_double", approval_required=True, **{**fields, **changes})  # type: ignore[arg-type]

    def claim(self, approval_id: str) -> ApprovalClaim:
        """The kernel's claim of the held call's approval, as the Governor makes it."""
        digest = arguments_digest({"path": str(self.entry), "text": "figures"})
        return self.kernel.claim_approval(
            approval_id,
            agent_id="engineer-1",
            tool="ledger_double",
            target="tool:ledger_double",
            action="write_entry",
            arguments_digest=digest,
        )

    async def held(self) -> str:
        outcome = await self.runtime.call(self.request(), OWNER)
        assert outcome.status is CallStatus.HELD and outcome.approval is not None
        return str(outcome.approval["approval_id"])


@pytest.fixture
async def setup(tmp_path: Path, colony_home: Path) -> AsyncIterator[Setup]:
    clock = FakeClock()
    kernel = ColonyKernel(KernelSettings(home=colony_home), clock=clock)
    kernel.set_trust("engineer-1", 0.8)
    runtime = Runtime(Catalog(write_registry(tmp_path, ["ledger_double"])), kernels=KernelProvider(kernel))
    yield Setup(runtime, kernel, clock, tmp_path)
    await runtime.aclose()


async def test_an_agent_cannot_approve_its_own_request(setup: Setup) -> None:
    approval_id = await setup.held()
    with pytest.raises(IdentityError, match="never decides its own request"):
        authorize_approval_decision(OWNER, "engineer-1")
    arguments = {"approval_id": approval_id, "approve": True}
    with pytest.raises(IdentityError):
        call_approval_tool(setup.runtime.kernels, "colony_decide_approval", arguments, OWNER)
    assert setup.kernel.get_approval(approval_id).state is ApprovalState.PENDING
    assert not setup.entry.exists()


async def test_a_principal_without_the_approve_token_cannot_decide(setup: Setup) -> None:
    approval_id = await setup.held()
    for name, arguments in (
        ("colony_decide_approval", {"approval_id": approval_id, "approve": True}),
        ("colony_decide_approval", {"approval_id": approval_id, "approve": False}),
    ):
        with pytest.raises(CapabilityDeniedError) as raised:
            call_approval_tool(setup.runtime.kernels, name, arguments, OTHER)
        assert raised.value.missing == ["kernel:approve"]
    assert setup.kernel.get_approval(approval_id).state is ApprovalState.PENDING


@pytest.mark.parametrize("wildcard", ["*", "kernel:*"])
async def test_a_wildcard_grant_does_not_make_an_agent_a_reviewer(setup: Setup, wildcard: str) -> None:
    # An agent's token given every tool and kernel operation is still an agent's: deciding other
    # agents' requests, reading them all and vouching for their work take kernel:approve by name.
    greedy = Principal.of("engineer-3", [wildcard])
    approval_id = await setup.held()
    with pytest.raises(CapabilityDeniedError, match="granted by name") as raised:
        call_approval_tool(
            setup.runtime.kernels, "colony_decide_approval", {"approval_id": approval_id, "approve": True}, greedy
        )
    assert raised.value.missing == ["kernel:approve"]
    assert setup.kernel.get_approval(approval_id).state is ApprovalState.PENDING
    assert not may_list(greedy, "colony_decide_approval") and may_list(OWNER, "colony_decide_approval")
    with pytest.raises(IdentityError, match="only its own approval requests"):
        call_approval_tool(setup.runtime.kernels, "colony_list_approvals", {"agent_id": "engineer-1"}, greedy)
    assert outcome_reporter(greedy, "engineer-1") is Reporter.AGENT  # its word on another agent, not a person's
    assert outcome_reporter(OWNER, "engineer-2") is Reporter.PERSON


@pytest.mark.parametrize(
    ("target", "refusal"),
    [
        ("ledger_double", "is for a plan the agent proposed"),  # named as the tool: not the tool's id
        ("tool:ledger_double", "its tool differ"),  # on the tool's id: then it names that as its tool
    ],
)
async def test_an_agents_own_plan_approved_cannot_run_a_tool_call(setup: Setup, target: str, refusal: str) -> None:
    # An agent proposed over the kernel tools a plan dressed as a held call (target the tool's name,
    # its arguments in the evidence, every one declared secret): the reviewer saw "[redacted]" for
    # each, and once the plan was approved the tool ran on it, judged on the agent's own text, its
    # outcome never recorded (the report was for another target than the verdict's).
    agent = Principal.of("engineer-1", ["tool:*", "kernel:propose"])
    arguments = {"path": str(setup.entry), "text": "figures"}
    plan = {
        "agent_id": "engineer-1",
        "action_type": "write_entry",
        "target": target,
        "rationale": str(CASE["rationale"]),
        "rollback_plan": str(CASE["rollback_plan"]),
        "evidence": json.dumps({"arguments": arguments, "sandbox": True, "secret_arguments": sorted(arguments)}),
    }
    verdict = call_kernel_tool(setup.runtime.kernels, "colony_propose_action", plan, agent)
    assert verdict["decision"] == "hold"
    [approval] = setup.kernel.list_approvals(agent_id="engineer-1")
    assert approval.arguments is not None and str(setup.entry) in approval.arguments  # the reviewer reads it all
    setup.kernel.approve(approval.approval_id, "ops", "the plan is fine")
    with pytest.raises(ToolInputError, match=refusal):
        await setup.runtime.call(setup.request(approval_id=approval.approval_id), agent)
    assert not setup.entry.exists()
    assert setup.kernel.get_approval(approval.approval_id).executed_at is None  # nothing claimed it


async def test_an_approvals_authorization_is_honoured_once(setup: Setup) -> None:
    approval_id = await setup.held()
    setup.kernel.approve(approval_id, "ops", "")
    first = await setup.runtime.call(setup.request(approval_id=approval_id), OWNER)
    assert first.status is CallStatus.EXECUTED
    setup.entry.unlink()
    with pytest.raises(ApprovalError, match="already executed"):
        await setup.runtime.call(setup.request(approval_id=approval_id), OWNER)
    assert not setup.entry.exists()
    # the kernel's token, claimed a second time or replayed on record_outcome, is refused too
    with pytest.raises(ApprovalError):
        setup.claim(approval_id)


async def test_an_approvals_token_cannot_be_recorded_twice(setup: Setup) -> None:
    approval_id = await setup.held()
    setup.kernel.approve(approval_id, "ops", "")
    granted = setup.claim(approval_id)
    report = {"agent_id": "engineer-1", "action_type": "write_entry", "target": "tool:ledger_double",
              "actual_outcome": "written", "tests_passed": True}  # fmt: skip
    assert setup.kernel.record_outcome(report, authorization=granted.authorization).attested
    with pytest.raises(AttestationError, match="already used"):
        setup.kernel.record_outcome(report, authorization=granted.authorization)


async def test_changed_arguments_cannot_ride_an_approval(setup: Setup) -> None:
    approval_id = await setup.held()
    setup.kernel.approve(approval_id, "ops", "")
    elsewhere = setup.root / "elsewhere"
    for changed in (
        {"arguments": {"path": str(elsewhere), "text": "figures"}},
        {"arguments": {"path": str(setup.entry), "text": "other figures"}},
        {"action": "erase_entry", "arguments": {"path": str(setup.entry)}},
    ):
        with pytest.raises(ToolInputError):
            await setup.runtime.call(setup.request(approval_id=approval_id, **changed), OWNER)
    assert not elsewhere.exists() and not setup.entry.exists()
    assert setup.kernel.get_approval(approval_id).executed_at is None  # the approved call still can run


async def test_an_expired_request_cannot_be_approved_or_run(setup: Setup) -> None:
    approval_id = await setup.held()
    setup.clock.advance(setup.kernel.settings.approval_ttl_seconds + 1)
    with pytest.raises(ApprovalError, match="expired") as raised:
        setup.kernel.approve(approval_id, "ops", "")
    assert raised.value.state == "expired"
    outcome = await setup.runtime.call(setup.request(approval_id=approval_id), OWNER)
    assert outcome.status is CallStatus.REJECTED and not setup.entry.exists()
    counts = setup.kernel.proposal_counts("engineer-1")
    assert counts.total == counts.accepted + counts.rejected + counts.held and counts.held == 0


async def test_another_agent_cannot_use_someone_elses_approval(setup: Setup) -> None:
    approval_id = await setup.held()
    setup.kernel.approve(approval_id, "ops", "")
    with pytest.raises(IdentityError, match="asked for agent 'engineer-1'"):
        await setup.runtime.call(setup.request(approval_id=approval_id), OTHER)
    with pytest.raises(IdentityError):  # nor name the owner without being an operator
        await setup.runtime.call(setup.request(approval_id=approval_id, agent_id="engineer-1"), OTHER)
    assert not setup.entry.exists()
    outcome = await setup.runtime.call(setup.request(approval_id=approval_id, agent_id="engineer-1"), OPERATOR)
    assert outcome.status is CallStatus.EXECUTED  # an operator may act for the agent, as everywhere


async def test_an_agent_cannot_read_another_agents_requests(setup: Setup) -> None:
    approval_id = await setup.held()
    listed = call_approval_tool(setup.runtime.kernels, "colony_list_approvals", {}, OTHER)
    assert listed == {"approvals": []}
    with pytest.raises(IdentityError):
        call_approval_tool(setup.runtime.kernels, "colony_list_approvals", {"agent_id": "engineer-1"}, OTHER)
    mine = call_approval_tool(setup.runtime.kernels, "colony_list_approvals", {}, OWNER)
    assert [item["approval_id"] for item in mine["approvals"]] == [approval_id]


def test_a_flood_of_held_calls_does_not_hide_another_agents_request(database_url: str) -> None:  # noqa: F811
    # The reviewers' page held the 500 newest requests: 520 held calls from one agent pushed another
    # agent's request off it, to expire unread (counted against that agent as a refusal).
    settings = KernelSettings(
        database_url=database_url,
        budget_llm_calls=10**6,
        budget_runtime_seconds=10**9,
        max_pending_approvals=LIST_LIMIT + 20,  # the page, not the backlog cap, is under attack here
    )
    kernel = ColonyKernel(settings)
    for agent in ("alice", "mallory"):
        kernel.set_trust(agent, 0.8)

    def held(agent: str, number: int) -> str:
        verdict = kernel.propose_action(approval_asked(agent, number))
        assert verdict.decision is Decision.HOLD and verdict.approval_id is not None
        return verdict.approval_id

    before = held("mallory", 0)
    mine = held("alice", 0)
    flood = [held("mallory", number) for number in range(1, LIST_LIMIT + 20)]
    page = [approval.approval_id for approval in kernel.list_approvals(state="pending")]
    assert len(page) == LIST_LIMIT
    assert page[:2] == [before, mine]  # each agent's oldest first, in turn
    assert page[2:] == flood[: LIST_LIMIT - 2]  # then the flood, oldest first
    everything = [approval.approval_id for approval in kernel.list_approvals()]
    assert mine in everything[:2]  # a listing of every state: each agent's newest, then the rest
    kernel.close()


def approval_asked(agent: str, number: int) -> ProposeActionRequest:
    """A plan the gate would pass, asking for a person's approval (so it is held)."""
    return ProposeActionRequest(
        agent_id=agent,
        action_type="write_entry",
        target=f"ledger.entry{number}",
        require_approval=True,
        rationale=str(CASE["rationale"]),
        rollback_plan=str(CASE["rollback_plan"]),
        evidence=json.dumps(CASE["evidence"]),
    )


def test_an_agent_cannot_bury_the_reviewers_under_held_calls(database_url: str) -> None:  # noqa: F811
    # Each held call opened a request a person must read, with no bound: one agent filing them
    # faster than people decide grew the queue (and the table) without end.
    clock = FakeClock()
    settings = KernelSettings(database_url=database_url, budget_llm_calls=10**6, max_pending_approvals=3)
    kernel = ColonyKernel(settings, clock=clock)
    for agent in ("alice", "mallory"):
        kernel.set_trust(agent, 0.8)
    waiting = [kernel.propose_action(approval_asked("mallory", number)) for number in range(3)]
    assert all(verdict.decision is Decision.HOLD for verdict in waiting)

    refused = kernel.propose_action(approval_asked("mallory", 3))
    assert refused.decision is Decision.REFUSE and refused.approval_id is None
    assert "already has 3 approval requests waiting" in refused.reason
    assert "max_pending_approvals" in refused.reason
    assert refused.required_evidence == [DECIDE_PENDING]
    assert kernel.pheromone_query("ledger.entry3", SignalType.FAILURE) == []  # its backlog says nothing of the target
    assert len(kernel.list_approvals(state="pending", agent_id="mallory")) == 3
    assert kernel.propose_action(approval_asked("alice", 0)).decision is Decision.HOLD  # another agent's own count

    kernel.reject(str(waiting[0].approval_id), "ops@example.org", "one at a time")
    assert kernel.propose_action(approval_asked("mallory", 4)).decision is Decision.HOLD  # a person made room
    assert kernel.propose_action(approval_asked("mallory", 5)).decision is Decision.REFUSE
    clock.advance(settings.approval_ttl_seconds + 1)  # expired, before any tick swept them: no longer waiting
    assert kernel.propose_action(approval_asked("mallory", 6)).decision is Decision.HOLD
    kernel.close()
