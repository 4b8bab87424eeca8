"""total_proposals = accepted + rejected + held (seed 001) on every path: verdicts, reports, expiries (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from sqlalchemy import func, select

from colony.errors import ApprovalError
from colony.kernel import ColonyKernel, Decision, KernelSettings, arguments_digest
from colony.kernel.counters import Counts
from colony.kernel.store import tables
from tests.colony.kernel.conftest import FakeClock, good_plan

AGENTS = st.sampled_from(["ant-a", "ant-b"])
STEPS = st.lists(
    st.one_of(
        st.sampled_from(list(Decision)).map(lambda d: ("verdict", d)),
        st.booleans().map(lambda ok: ("outcome", ok)),
        st.just(("expiry", None)),
    ),
    max_size=60,
)


@given(STEPS)
def test_the_rules_keep_the_invariant(steps: list[tuple[str, object]]) -> None:
    counts = Counts()
    for step, value in steps:
        before = counts
        if step == "verdict":
            counts = counts.on_verdict(value)  # type: ignore[arg-type]
        elif step == "outcome":
            counts = counts.on_outcome(bool(value))
        else:
            counts = counts.on_expiry()
        assert counts.consistent, (before, step, value, counts)
        assert counts.accepted <= counts.total


def test_reports_without_proposals_count_nothing() -> None:
    counts = Counts()
    for _ in range(3):
        counts = counts.on_outcome(True)
    assert counts == Counts()  # issue: three reports used to give total 0, accepted 3


def test_seed_example_path() -> None:
    counts = Counts()
    for decision in (Decision.REFUSE, Decision.REFUSE, Decision.HOLD):
        counts = counts.on_verdict(decision)
    counts = counts.on_outcome(True)
    assert (counts.total, counts.accepted, counts.rejected, counts.held) == (3, 1, 2, 0)


def test_a_refused_proposal_stays_rejected_when_a_later_report_passes() -> None:
    counts = Counts().on_verdict(Decision.REFUSE).on_outcome(True)
    assert (counts.total, counts.accepted, counts.rejected, counts.held, counts.unreported) == (1, 0, 1, 0, 0)
    lapsed = Counts().on_verdict(Decision.HOLD).on_expiry().on_outcome(True)
    assert (lapsed.accepted, lapsed.rejected) == (0, 1)


REPORT = {"action_type": "patch_file", "target": "pkg.parser", "actual_outcome": "done"}
TTL = 100.0


class CountersAgainstTheKernel(RuleBasedStateMachine):
    """Proposals, approvals, reports (attested, matched, unlinked), expiries and ticks in any order."""

    @initialize()
    def start(self) -> None:
        self.clock = FakeClock(10_000.0)
        self.kernel = ColonyKernel(
            KernelSettings(
                database_url="sqlite://", attestation_ttl_seconds=TTL, approval_ttl_seconds=TTL, budget_llm_calls=30
            ),
            clock=self.clock,
        )
        self.tokens: list[tuple[str, str]] = []  # (agent, authorization) of EXECUTE verdicts

    def teardown(self) -> None:
        self.kernel.close()

    @rule(agent=AGENTS, trust=st.sampled_from([0.1, 0.3, 0.6]), tests=st.booleans(), rm=st.booleans())
    def propose(self, agent: str, trust: float, tests: bool, rm: bool) -> None:
        self.kernel.set_trust(agent, trust)
        evidence = '{"tests": ["t"]}' if tests else "{}"
        plan = good_plan(agent_id=agent, evidence=evidence, budget_estimate={"llm_calls": 3, "runtime_seconds": 1})
        if rm:
            plan["rollback_plan"] = "rm -rf /"
        verdict = self.kernel.propose_action(plan)
        if verdict.authorization:
            self.tokens.append((agent, verdict.authorization))

    @precondition(lambda self: bool(self.tokens))
    @rule(index=st.integers(min_value=0), passed=st.booleans())
    def attested_report(self, index: int, passed: bool) -> None:
        agent, token = self.tokens.pop(index % len(self.tokens))
        try:
            self.kernel.record_outcome({**REPORT, "agent_id": agent, "tests_passed": passed}, authorization=token)
        except Exception as error:  # noqa: BLE001 - expired or already settled by a matched report
            assert "expired" in str(error) or "already used" in str(error)

    @rule(agent=AGENTS, passed=st.booleans(), feedback=st.sampled_from([-1.0, 0.0, 1.0]))
    def unattested_report(self, agent: str, passed: bool, feedback: float) -> None:
        self.kernel.record_outcome({**REPORT, "agent_id": agent, "tests_passed": passed, "human_feedback": feedback})

    @rule(index=st.integers(min_value=0), approve=st.booleans())
    def decide(self, index: int, approve: bool) -> None:
        pending = self.kernel.list_approvals(state="pending")
        if not pending:
            return
        approval = pending[index % len(pending)]
        try:
            (self.kernel.approve if approve else self.kernel.reject)(approval.approval_id, "ops", "")
        except ApprovalError as error:  # lapsed just now, or the budget cannot carry it
            assert error.state in ("expired", "pending"), error
            return
        if approve:
            digest = arguments_digest({})
            claim = self.kernel.claim_approval(
                approval.approval_id, agent_id=approval.agent_id, tool=approval.tool, target=approval.target,
                action=approval.action, arguments_digest=digest,
            )  # fmt: skip
            if claim.authorization:
                self.tokens.append((approval.agent_id, claim.authorization))

    @rule(seconds=st.sampled_from([10.0, TTL]))
    def time_passes(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @rule()
    def tick(self) -> None:
        self.kernel.tick()

    @invariant()
    def refused_approvals_are_recorded_once(self) -> None:
        for approval in self.kernel.list_approvals():
            entry = self.kernel.consequence_of(approval.proposal_id)
            if approval.state.value in ("rejected", "expired"):
                assert entry is not None and entry.kind.value == {"rejected": "rejection"}.get(
                    approval.state.value, "expiry"
                ), (approval, entry)

    @invariant()
    def counters_agree(self) -> None:
        for agent in ("ant-a", "ant-b"):
            counts = self.kernel.proposal_counts(agent)
            assert counts.total == counts.accepted + counts.rejected + counts.held, counts
            profile = self.kernel.find_profile(agent)
            if profile is not None:
                assert (profile.total_proposals, profile.accepted_proposals) == (counts.total, counts.accepted)
                assert profile.accepted_proposals <= profile.total_proposals

    @invariant()
    def reserved_is_what_is_open(self) -> None:
        proposals = tables.proposals
        query = select(func.coalesce(func.sum(proposals.c.reserved_llm_calls), 0.0)).where(
            proposals.c.reservation == "open"
        )
        open_amount = self.kernel.store.run(lambda c: c.execute(query).scalar_one(), write=False)
        budget = self.kernel.store.run(
            lambda c: c.execute(
                select(func.coalesce(func.sum(tables.budget_periods.c.llm_calls_reserved), 0.0))
            ).scalar_one(),
            write=False,
        )
        assert budget == pytest.approx(open_amount)


CountersAgainstTheKernel.TestCase.settings = settings(max_examples=25, stateful_step_count=30, deadline=None)
test_counters_hold_on_every_path = CountersAgainstTheKernel.TestCase


def test_a_mixed_history_on_each_database(any_kernel: ColonyKernel, clock: FakeClock) -> None:
    report = {**REPORT, "agent_id": "engineer-1", "tests_passed": True}
    any_kernel.propose_action(good_plan())  # sandbox: refused
    any_kernel.set_trust("engineer-1", 0.6)
    held = any_kernel.propose_action(good_plan(evidence="{}"))  # no tests: held
    executed = [any_kernel.propose_action(good_plan()) for _ in range(2)]
    assert [held.decision, *(v.decision for v in executed)] == [Decision.HOLD, Decision.EXECUTE, Decision.EXECUTE]
    any_kernel.record_outcome(report, authorization=executed[0].authorization)
    clock.advance(3600)
    any_kernel.tick()  # the second execution never reported: expired; nobody decided the hold: refused
    for _ in range(4):  # late reports settle the rejected three, which stay rejected
        any_kernel.record_outcome(report)
    counts = any_kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.accepted, counts.rejected, counts.held) == (4, 1, 3, 0)
    profile = any_kernel.agent_profile("engineer-1")
    assert (profile.total_proposals, profile.accepted_proposals) == (4, 1)
