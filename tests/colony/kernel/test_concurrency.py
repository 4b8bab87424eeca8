"""Several OS processes propose and record against one small budget, on SQLite and on PostgreSQL.

Never an overspend, no lost or duplicated consequence, trust consistent with the records.
"""

from __future__ import annotations

import multiprocessing

import pytest
from sqlalchemy import select

from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.store import tables
from tests.colony.kernel.workers import propose_and_record

PROCESSES = 4
ROUNDS = 12
BUDGET = 15
AGENTS = ["ant-a", "ant-b", "ant-c"]


def test_processes_never_overspend_nor_lose_records(database_url: str) -> None:
    settings = KernelSettings(
        database_url=database_url,
        budget_llm_calls=BUDGET,
        budget_runtime_seconds=1000,
        attestation_secret="shared-test-key",
    )
    kernel = ColonyKernel(settings)
    for agent in AGENTS:
        kernel.set_trust(agent, 0.6)
    context = multiprocessing.get_context("fork")
    with context.Pool(PROCESSES) as pool:
        results = pool.starmap(
            propose_and_record, [(database_url, n, ROUNDS, AGENTS, BUDGET) for n in range(PROCESSES)]
        )

    executed = [pid for result in results for pid in result["executed"]]
    consequences = [cid for result in results for cid in result["consequences"]]
    replays = [pid for result in results for pid in result["replays"]]
    total = sum(len(r["executed"]) + len(r["refused"]) + len(r["held"]) for r in results)
    assert total == PROCESSES * ROUNDS

    # never an overspend: exactly the budget was executed, and what was settled is within it
    assert len(executed) == BUDGET
    usage = kernel.status().budget_usage["llm_calls"]
    assert usage.used == BUDGET <= usage.max
    period = kernel.store.run(lambda c: c.execute(select(tables.budget_periods)).one(), write=False)
    assert period.llm_calls_reserved == pytest.approx(0.0)

    # every executed verdict was recorded exactly once; every replay refused
    assert sorted(replays) == sorted(executed)
    stored = [record for agent in AGENTS for record in kernel.consequence_log(agent)]
    assert sorted(r.consequence_id for r in stored) == sorted(consequences)
    assert sorted(r.proposal_id for r in stored) == sorted(executed)  # type: ignore[type-var]

    # trust is the chain of its records
    for agent in AGENTS:
        records = kernel.consequence_log(agent)
        trust = 0.6
        for record in records:
            assert record.trust_before == trust
            trust = record.trust_after
        profile = kernel.agent_profile(agent)
        assert profile.trust_score == trust
        assert profile.consequence_history == [r.consequence_id for r in records]
    assert sum(kernel.agent_profile(a).total_proposals for a in AGENTS) == PROCESSES * ROUNDS
    kernel.close()
