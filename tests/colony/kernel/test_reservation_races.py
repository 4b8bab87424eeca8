"""Processes settle and expire reservations at once: each is settled or expired exactly once (SQLite, PostgreSQL)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.store import tables
from tests.colony.kernel.workers import execute_and_maybe_report, sweep_later

PROCESSES, ROUNDS, TTL, T0 = 4, 9, 600.0, 1_751_234_500.0
SWEEPERS = PROCESSES * 3
LATE = len([n for n in range(SWEEPERS) if n % 3 == 1])  # sweepers that propose (a read, reserving the default 1)


@pytest.fixture
def setup(database_url: str) -> Iterator[ColonyKernel]:
    kernel = ColonyKernel(KernelSettings(database_url=database_url, attestation_secret="shared-test-key"))
    yield kernel
    kernel.close()


def test_reservations_settle_or_expire_exactly_once(database_url: str, setup: ColonyKernel) -> None:
    for worker in range(PROCESSES):
        setup.set_trust(f"ant-{worker}", 0.6)
    context = multiprocessing.get_context("fork")
    with context.Pool(PROCESSES) as pool:
        done = pool.starmap(execute_and_maybe_report, [(database_url, n, ROUNDS, T0, TTL) for n in range(PROCESSES)])
        pool.starmap(sweep_later, [(database_url, n, T0 + TTL, TTL) for n in range(SWEEPERS)])

    proposals = tables.proposals
    rows = setup.store.run(
        lambda c: c.execute(select(proposals.c.proposal_id, proposals.c.reservation)).all(), write=False
    )
    state = {row.proposal_id: row.reservation for row in rows}
    for result in done:
        assert all(state[pid] == "settled" for pid in result["attested"] + result["matched"])
        assert all(state[pid] == "expired" for pid in result["left"])
    left = [pid for result in done for pid in result["left"]]

    # one expiry entry per lapsed reservation, never two
    consequences = tables.consequences
    expiries = setup.store.run(
        lambda c: c.execute(select(consequences.c.proposal_id).where(consequences.c.kind == "expiry")).all(),
        write=False,
    )
    assert sorted(row.proposal_id for row in expiries) == sorted(left)

    # the ledger: only the late reads held, what lapsed counted as expired, the rest charged once
    period = setup.store.run(lambda c: c.execute(select(tables.budget_periods)).one(), write=False)
    assert period.llm_calls_reserved == pytest.approx(LATE)
    assert period.llm_calls_expired == pytest.approx(len(left))
    assert period.llm_calls_used == pytest.approx(PROCESSES * ROUNDS - len(left))

    for worker in range(PROCESSES):
        counts = setup.proposal_counts(f"ant-{worker}")
        assert (counts.total, counts.accepted, counts.rejected, counts.held) == (ROUNDS, 6, 3, 0)
    total = setup.store.run(lambda c: c.execute(select(func.count()).select_from(proposals)).scalar(), write=False)
    assert total == PROCESSES * ROUNDS + LATE
