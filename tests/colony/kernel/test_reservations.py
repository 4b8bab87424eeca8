"""Reservations expire with their authorization, and an outcome settles its own: on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from colony.errors import AttestationError
from colony.kernel import AttestationMode, ColonyKernel, ConsequenceRecord, Decision, KernelSettings
from colony.kernel.store import tables
from tests.colony.kernel.conftest import FakeClock, good_plan

TTL = 3600.0
ESTIMATE = {"llm_calls": 2, "runtime_seconds": 30}
LEASE = 300.0 + 30  # the reservation lease, then the work's own expected time
REPORT = {
    "agent_id": "engineer-1",
    "action_type": "patch_file",
    "target": "pkg.parser",
    "actual_outcome": "patched; tests pass",
    "tests_passed": True,
}


def _execute(kernel: ColonyKernel, **changes: object) -> str:
    kernel.set_trust("engineer-1", 0.3)
    verdict = kernel.propose_action(good_plan(**{"budget_estimate": ESTIMATE, **changes}))
    assert verdict.decision is Decision.EXECUTE, verdict.reason
    assert verdict.proposal_id
    return verdict.proposal_id


def _reservation(kernel: ColonyKernel, proposal_id: str) -> str:
    proposals = tables.proposals
    query = select(proposals.c.reservation).where(proposals.c.proposal_id == proposal_id)
    return str(kernel.store.run(lambda c: c.execute(query).scalar_one(), write=False))


def _budget(kernel: ColonyKernel) -> dict[str, dict[str, float]]:
    return {name: d.model_dump(mode="json") for name, d in kernel.status().budget_usage.items()}


def test_status_shows_what_is_reserved_next_to_what_is_used(any_kernel: ColonyKernel) -> None:
    _execute(any_kernel)
    assert _budget(any_kernel)["llm_calls"] == {"used": 0, "reserved": 2, "max": 10}


def test_the_tick_expires_a_lapsed_reservation(any_kernel: ColonyKernel, clock: FakeClock) -> None:
    proposal = _execute(any_kernel)
    clock.advance(LEASE - 1)
    any_kernel.tick()
    assert _reservation(any_kernel, proposal) == "open"  # not yet: the lease still runs
    clock.advance(1)
    any_kernel.tick()
    assert _reservation(any_kernel, proposal) == "expired"
    assert _budget(any_kernel)["llm_calls"] == {"used": 0, "expired": 2, "max": 10}
    assert _budget(any_kernel)["runtime_seconds"] == {"used": 0, "expired": 30, "max": 3600}
    # the expiry is in the agent's history, moving no trust
    [entry] = any_kernel.consequence_log("engineer-1")
    assert (entry.kind.value, entry.proposal_id, entry.tests_passed) == ("expiry", proposal, False)
    assert entry.trust_before == entry.trust_after == 0.3
    assert "expired" in entry.actual_outcome and "llm_calls 2" in entry.actual_outcome
    profile = any_kernel.agent_profile("engineer-1")
    assert profile.consequence_history == [entry.consequence_id]
    counts = any_kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.accepted, counts.rejected, counts.held) == (1, 0, 1, 0)
    any_kernel.tick()  # released once only
    assert len(any_kernel.consequence_log("engineer-1")) == 1
    assert _budget(any_kernel)["llm_calls"]["expired"] == 2


def test_a_proposal_releases_lapsed_reservations_before_it_weighs_the_budget(
    any_kernel: ColonyKernel, clock: FakeClock
) -> None:
    plan = {"budget_estimate": {"llm_calls": 5, "runtime_seconds": 1}}
    for _ in range(2):
        _execute(any_kernel, **plan)
    assert any_kernel.propose_action(good_plan(**plan)).budget_approved is False  # 10 of 10 reserved
    clock.advance(TTL)  # the holders crashed: no outcome, no tick
    assert any_kernel.propose_action(good_plan(**plan)).decision is Decision.EXECUTE
    assert [e.kind.value for e in any_kernel.consequence_log("engineer-1")] == ["expiry", "expiry"]


def test_status_releases_lapsed_reservations(any_kernel: ColonyKernel, clock: FakeClock) -> None:
    _execute(any_kernel)
    clock.advance(TTL + 5)
    assert _budget(any_kernel)["llm_calls"] == {"used": 0, "expired": 2, "max": 10}
    assert [r.kind.value for r in any_kernel.status().recent_consequences] == ["expiry"]


def test_an_unattested_report_settles_the_matching_reservation(any_kernel: ColonyKernel) -> None:
    first = _execute(any_kernel)
    second = _execute(any_kernel)
    record = any_kernel.record_outcome({**REPORT, "llm_calls": 1})
    assert record.attested is False
    # the oldest open reservation of this agent, action and target: released, and only the usage charged
    assert (_reservation(any_kernel, first), _reservation(any_kernel, second)) == ("settled", "open")
    assert _budget(any_kernel)["llm_calls"] == {"used": 1, "reserved": 2, "max": 10}
    [entry] = any_kernel.consequence_log("engineer-1")
    assert entry.proposal_id == first
    any_kernel.record_outcome(REPORT)  # no usage given: the reservation's amount is charged
    assert _budget(any_kernel)["llm_calls"] == {"used": 3, "max": 10}
    any_kernel.record_outcome(REPORT)  # nothing left to settle: only the usage it reports is charged
    assert _budget(any_kernel)["llm_calls"] == {"used": 3, "max": 10}


def test_a_report_for_another_action_or_target_leaves_the_reservation(any_kernel: ColonyKernel) -> None:
    proposal = _execute(any_kernel)
    any_kernel.record_outcome({**REPORT, "target": "pkg.other"})
    any_kernel.record_outcome({**REPORT, "action_type": "patch_other"})
    any_kernel.record_outcome({**REPORT, "agent_id": "someone-else"})
    assert _reservation(any_kernel, proposal) == "open"


def test_a_matched_report_uses_up_the_authorization(any_kernel: ColonyKernel) -> None:
    any_kernel.set_trust("engineer-1", 0.3)
    verdict = any_kernel.propose_action(good_plan(budget_estimate=ESTIMATE))
    any_kernel.record_outcome(REPORT)
    with pytest.raises(AttestationError, match="already used"):  # never charged twice
        any_kernel.record_outcome(REPORT, authorization=verdict.authorization)
    assert _budget(any_kernel)["llm_calls"] == {"used": 2, "max": 10}


def test_an_attested_report_after_expiry_is_refused(any_kernel: ColonyKernel, clock: FakeClock) -> None:
    any_kernel.set_trust("engineer-1", 0.3)
    verdict = any_kernel.propose_action(good_plan(budget_estimate=ESTIMATE))
    clock.advance(TTL)
    any_kernel.tick()
    with pytest.raises(AttestationError, match="expired"):
        any_kernel.record_outcome(REPORT, authorization=verdict.authorization)
    # a report without it settles nothing (the hold is gone) and charges only what it reports
    any_kernel.record_outcome({**REPORT, "llm_calls": 1})
    assert _budget(any_kernel)["llm_calls"] == {"used": 1, "expired": 2, "max": 10}
    counts = any_kernel.proposal_counts("engineer-1")
    assert (counts.total, counts.accepted, counts.rejected, counts.held) == (1, 0, 1, 0)  # expired: stays rejected


def test_a_reservation_that_expired_past_its_authorization_is_not_matched(
    any_kernel: ColonyKernel, clock: FakeClock
) -> None:
    proposal = _execute(any_kernel)
    clock.advance(TTL)  # lapsed, not yet swept
    any_kernel.record_outcome(REPORT)
    assert _reservation(any_kernel, proposal) == "open"
    any_kernel.tick()
    assert _reservation(any_kernel, proposal) == "expired"


def test_off_mode_reservations_are_settled_by_their_report(colony_home, clock: FakeClock) -> None:  # type: ignore[no-untyped-def]
    kernel = ColonyKernel(KernelSettings(home=colony_home, attestation=AttestationMode.OFF), clock=clock)
    proposal = _execute(kernel)
    kernel.record_outcome(REPORT)
    assert _reservation(kernel, proposal) == "settled"
    assert _budget(kernel)["llm_calls"] == {"used": 2, "max": 500}
    kernel.close()


def test_the_expiry_follows_the_attestation_ttl(colony_home, clock: FakeClock) -> None:  # type: ignore[no-untyped-def]
    kernel = ColonyKernel(KernelSettings(home=colony_home, attestation_ttl_seconds=60), clock=clock)
    proposal = _execute(kernel)
    clock.advance(60)
    kernel.tick()
    assert _reservation(kernel, proposal) == "expired"
    kernel.close()


def test_expiry_entries_read_back_as_records(any_kernel: ColonyKernel, clock: FakeClock) -> None:
    _execute(any_kernel)
    clock.advance(TTL)
    [entry] = any_kernel.tick().recent_consequences
    assert isinstance(entry, ConsequenceRecord)
    assert entry.model_dump(mode="json")["kind"] == "expiry"
