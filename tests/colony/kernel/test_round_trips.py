"""A governed call's kernel work is lean: few statements per verdict and per record, and every guarantee kept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from colony.kernel import ColonyKernel, Decision, KernelSettings, RecordOutcomeRequest, Reporter
from tests.colony.kernel.conftest import FakeClock, good_plan


@contextmanager
def statements(kernel: ColonyKernel) -> Iterator[list[str]]:
    """Every SQL statement this thread's kernel connection runs inside the block (BEGIN and COMMIT included)."""
    seen: list[str] = []
    dbapi: Any = kernel.store._connection().connection.dbapi_connection
    dbapi.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        dbapi.set_trace_callback(None)


def governed_call(kernel: ColonyKernel) -> Callable[[], None]:
    """A side-effecting call's kernel work, as the Governor does it: a verdict that holds its runtime, then a record."""

    def call() -> None:
        verdict = kernel.propose_action(good_plan(runs_within_seconds=30, budget_estimate={"runtime_seconds": 1}))
        assert verdict.decision is Decision.EXECUTE and verdict.runtime_held == 30
        report = RecordOutcomeRequest(
            agent_id="engineer-1",
            action_type="patch_file",
            target="pkg.parser",
            actual_outcome="patched",
            tests_passed=True,
            human_feedback=0.0,
            runtime_seconds=0.5,
        )
        kernel.record_outcome(report, verdict.authorization, reported_by=Reporter.RUNTIME, measured=True)

    return call


def test_a_governed_call_takes_two_short_transactions_on_sqlite(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.9)
    call = governed_call(kernel)
    call()  # the agent, its traces and the budget period exist from here on
    with statements(kernel) as seen:
        call()
    assert [text for text in seen if text in ("BEGIN IMMEDIATE", "COMMIT")] == ["BEGIN IMMEDIATE", "COMMIT"] * 2
    # The verdict: one reading, the proposal, the agent's count and hold, the budget, the audit entry and head;
    # the record: the settled proposal, the agent, the traces, trust, the history, two traces, the budget.
    assert len(seen) - 4 <= 14, "\n".join(seen)
    assert not [text for text in seen if text.startswith("SELECT colony_proposals")]  # no proposal read again
    assert kernel.verify_audit().ok


def test_a_verdict_grows_its_reservation_only_as_far_as_the_period_budget_leaves(colony_home: Path) -> None:
    settings = KernelSettings(home=colony_home, budget_runtime_seconds=50, agent_budget_share=1)
    kernel = ColonyKernel(settings, clock=FakeClock())
    try:
        kernel.set_trust("engineer-1", 0.9)
        first = kernel.propose_action(good_plan(runs_within_seconds=30, budget_estimate={"runtime_seconds": 5}))
        second = kernel.propose_action(good_plan(runs_within_seconds=30, budget_estimate={"runtime_seconds": 5}))
        third = kernel.propose_action(good_plan(runs_within_seconds=30, budget_estimate={"runtime_seconds": 5}))
        assert (first.runtime_held, second.runtime_held) == (30, 20)  # the rest of the period, no more
        assert third.decision is Decision.REFUSE and not third.budget_approved  # the estimate itself no longer fits
        runtime = kernel.status().budget_usage["runtime_seconds"]
        assert runtime.reserved == 50 and runtime.max == 50
    finally:
        kernel.close()


def test_growing_a_reservation_before_the_run_stops_at_the_period_budget_on_each_database(
    any_kernel: ColonyKernel,
) -> None:
    any_kernel.set_trust("engineer-1", 0.9)
    plan = good_plan(budget_estimate={"llm_calls": 0, "runtime_seconds": 5})
    first, second = any_kernel.propose_action(plan), any_kernel.propose_action(plan)
    limit = any_kernel.settings.budget_runtime_seconds
    assert any_kernel.reserve_runtime(first.proposal_id or "", limit) == limit - 5  # what the second leaves
    assert any_kernel.reserve_runtime(second.proposal_id or "", limit) == 5  # its own estimate, no more
    assert any_kernel.reserve_runtime("00000000-0000-7000-8000-000000000000", 10) is None  # no open reservation
    runtime = any_kernel.status().budget_usage["runtime_seconds"]
    assert runtime.reserved == pytest.approx(limit)
