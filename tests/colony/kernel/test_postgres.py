"""The kernel's behaviour on PostgreSQL: the same operations, the same answers, across a restart."""

from __future__ import annotations

import pytest

from colony.errors import AttestationError
from colony.kernel import ColonyKernel, Decision, KernelSettings
from tests.colony.kernel.conftest import FakeClock, good_plan


def test_lifecycle_on_postgresql(postgres_url: str, clock: FakeClock) -> None:
    settings = KernelSettings(database_url=postgres_url, budget_llm_calls=2)
    kernel = ColonyKernel(settings, clock=clock)
    assert kernel.propose_action(good_plan()).reason == "SANDBOX role: no write-path gate passes"
    kernel.set_trust("engineer-1", 0.3)
    plan = good_plan(budget_estimate={"llm_calls": 1, "runtime_seconds": 1})
    first, second, third = (kernel.propose_action(plan) for _ in range(3))
    assert [v.decision for v in (first, second, third)] == [Decision.EXECUTE, Decision.EXECUTE, Decision.REFUSE]
    report = {"agent_id": "engineer-1", "action_type": "patch_file", "target": "pkg.parser",
              "actual_outcome": "ok", "tests_passed": True, "llm_calls": 1}  # fmt: skip
    assert kernel.record_outcome(report, authorization=first.authorization).attested
    with pytest.raises(AttestationError, match="already used"):
        kernel.record_outcome(report, authorization=first.authorization)
    kernel.deposit("pkg.parser", "risk", 3.8)
    assert kernel.tick().tick_count == 1
    kernel.close()

    again = ColonyKernel(settings, clock=clock)  # a restart loses nothing
    status = again.status()
    assert (status.tick_count, status.budget_usage["llm_calls"].used) == (1, 1)
    assert again.pheromone_query("pkg.parser", "risk")[0].strength == pytest.approx(3.42)
    assert again.agent_profile("engineer-1").total_proposals == 4
    assert len(status.recent_consequences) == 1
    assert again.falsify_plan('{"action_type": "delete", "target": "a.b"}').recommendation is Decision.HOLD
    assert again.pruning_report().total_candidates == 0
    again.close()
