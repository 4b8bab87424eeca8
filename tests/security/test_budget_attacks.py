"""Budget hoarding: one agent's unreported proposals cannot hold the period's budget from everyone else."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import select

from colony.kernel import ColonyKernel, Decision, KernelSettings
from colony.kernel.store import tables
from colony.runtime import KernelProvider, Principal
from colony.surfaces.kernel_tools import run_kernel_tool
from tests.colony.kernel.conftest import FakeClock, clock, database_url  # noqa: F401 - fixtures

BUDGET = 300.0  # runtime seconds per period; each proposal reserves the default 10
SHARE = BUDGET * 0.25
LEASE = 300.0 + 10  # the reservation lease, then the work's own expected time
HOARDER = Principal.of("hoarder", ["kernel:read", "kernel:propose", "kernel:record"])


@pytest.fixture
def kernel(database_url: str, clock: FakeClock) -> Iterator[ColonyKernel]:  # noqa: F811
    settings = KernelSettings(database_url=database_url, budget_runtime_seconds=BUDGET, budget_llm_calls=1000)
    instance = ColonyKernel(settings, clock=clock)
    yield instance
    instance.close()


def _read_only(agent: str, n: int) -> dict[str, Any]:
    return {
        "agent_id": agent,
        "action_type": "read_docs",
        "target": f"docs.page-{n}",
        "rationale": "Read the page to answer the operator's question about the parser",
        "rollback_plan": "nothing to undo: reading changes nothing",
        "evidence": '{"question": "how does the parser split branch names"}',
    }


def _held(kernel: ColonyKernel, agent: str) -> float:
    agents = tables.agents
    query = select(agents.c.held_runtime_seconds).where(agents.c.agent_id == agent)
    return float(kernel.store.run(lambda connection: connection.execute(query).scalar_one(), write=False))


def test_one_agent_cannot_hoard_the_period_with_unreported_proposals(
    kernel: ColonyKernel,
    clock: FakeClock,  # noqa: F811
) -> None:
    verdicts = [kernel.propose_action(_read_only("hoarder", n)) for n in range(29)]
    executed = [v for v in verdicts if v.decision is Decision.EXECUTE]
    assert len(executed) == int(SHARE // 10)
    refused = [v for v in verdicts if v.decision is Decision.REFUSE]
    assert refused and all("agent budget share exceeded" in v.reason and "0.25" in v.reason for v in refused)
    assert _held(kernel, "hoarder") == pytest.approx(len(executed) * 10)
    assert kernel.status().budget_usage["runtime_seconds"].reserved <= SHARE
    # everyone else still gets the budget
    assert kernel.propose_action(_read_only("bystander", 0)).decision is Decision.EXECUTE
    # the lease runs out within minutes, not the authorization's hour: the holds are released, in history
    clock.advance(LEASE)
    kernel.tick()
    assert _held(kernel, "hoarder") == 0
    assert kernel.status().budget_usage["runtime_seconds"].reserved == 0
    expiries = [entry for entry in kernel.consequence_log("hoarder") if entry.kind.value == "expiry"]
    assert sorted(entry.proposal_id for entry in expiries) == sorted(v.proposal_id for v in executed)
    assert kernel.propose_action(_read_only("hoarder", 99)).decision is Decision.EXECUTE


def test_a_settled_reservation_frees_the_agents_share(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(_read_only("hoarder", 0))
    report = {
        "agent_id": "hoarder",
        "action_type": "read_docs",
        "target": "docs.page-0",
        "actual_outcome": "read it",
        "tests_passed": True,
        "human_feedback": 0.0,
        "runtime_seconds": 3.0,
    }
    kernel.record_outcome(report, verdict.authorization)
    assert _held(kernel, "hoarder") == 0


def test_the_work_own_expected_time_extends_the_lease_never_past_the_authorization(
    kernel: ColonyKernel,
    clock: FakeClock,  # noqa: F811
) -> None:
    long = kernel.propose_action({**_read_only("hoarder", 0), "runs_within_seconds": 7200})
    held = _held(kernel, "hoarder")
    clock.advance(3599)
    kernel.tick()
    assert _held(kernel, "hoarder") == held > 0
    clock.advance(1)
    kernel.tick()
    assert _held(kernel, "hoarder") == 0
    assert kernel.consequence_of(long.proposal_id or "").kind.value == "expiry"  # type: ignore[union-attr]


def test_hoarding_over_mcp_is_capped_at_the_share(kernel: ColonyKernel) -> None:
    answers = [
        run_kernel_tool(KernelProvider(kernel), "colony_propose_action", _read_only("hoarder", n), HOARDER)
        for n in range(29)
    ]
    assert sum(answer["decision"] == "execute" for answer in answers) == int(SHARE // 10)
    assert "agent budget share exceeded" in answers[-1]["reason"]
    other = Principal.of("bystander", ["kernel:propose"])
    answer = run_kernel_tool(KernelProvider(kernel), "colony_propose_action", _read_only("bystander", 0), other)
    assert answer["decision"] == "execute"


def test_concurrent_proposals_never_pass_the_share_on_postgresql(
    postgres_url: str,
    clock: FakeClock,  # noqa: F811
) -> None:
    settings = KernelSettings(database_url=postgres_url, budget_runtime_seconds=BUDGET, budget_llm_calls=1000)
    kernels = [ColonyKernel(settings, clock=clock) for _ in range(4)]
    try:
        kernels[0].propose_action(_read_only("hoarder", -1))  # the agent exists before the race
        with ThreadPoolExecutor(8) as pool:
            verdicts = list(pool.map(lambda n: kernels[n % 4].propose_action(_read_only("hoarder", n)), range(40)))
        executed = 1 + sum(v.decision is Decision.EXECUTE for v in verdicts)
        assert executed == int(SHARE // 10)
        assert _held(kernels[0], "hoarder") == pytest.approx(executed * 10)
        assert kernels[0].status().budget_usage["runtime_seconds"].reserved == pytest.approx(executed * 10)
    finally:
        for instance in kernels:
            instance.close()


def test_a_running_action_keeps_its_reservation_past_the_lease_and_records_its_outcome(
    kernel: ColonyKernel,
    clock: FakeClock,  # noqa: F811
) -> None:
    verdict = kernel.propose_action(_read_only("worker", 0))
    granted = kernel.reserve_runtime(verdict.proposal_id or "", 60.0)  # the runtime starts a 60 s action
    assert granted == 60.0 and _held(kernel, "worker") == 60.0
    clock.advance(LEASE + 30)  # past the proposal's own lease, within the action's deadline plus the lease
    kernel.tick()
    assert _held(kernel, "worker") == 60.0
    report = {
        "agent_id": "worker",
        "action_type": "read_docs",
        "target": "docs.page-0",
        "actual_outcome": "read it",
        "tests_passed": True,
        "human_feedback": 0.0,
        "runtime_seconds": 55.0,
    }
    assert kernel.record_outcome(report, verdict.authorization).attested
    assert _held(kernel, "worker") == 0


def test_growing_a_reservation_stops_at_the_agents_share(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(_read_only("greedy", 0))
    assert kernel.reserve_runtime(verdict.proposal_id or "", BUDGET) == pytest.approx(SHARE)
    assert _held(kernel, "greedy") == pytest.approx(SHARE)
    assert kernel.propose_action(_read_only("greedy", 1)).decision is Decision.REFUSE
    assert kernel.propose_action(_read_only("bystander", 0)).decision is Decision.EXECUTE


def test_a_verdict_grows_its_reservation_toward_the_work_time_within_the_share(kernel: ColonyKernel) -> None:
    grown = kernel.propose_action({**_read_only("worker", 0), "runs_within_seconds": 40})
    assert "runtime_held" not in grown.seed_dict()  # the seed's verdict keeps its keys
    if not kernel.store.is_sqlite:  # a pipelined verdict does not grow: the runtime asks reserve_runtime
        assert grown.runtime_held is None and _held(kernel, "worker") == 10
        return
    assert grown.runtime_held == 40 and _held(kernel, "worker") == 40
    capped = kernel.propose_action({**_read_only("worker", 1), "runs_within_seconds": BUDGET})
    assert capped.runtime_held == pytest.approx(SHARE - 40)  # the rest of the agent's share, no more
    assert _held(kernel, "worker") == pytest.approx(SHARE)
