"""The actuation gate end to end: roles, findings, budget and pheromone pressure decide the verdict."""

from __future__ import annotations

import json

from colony.kernel import ColonyKernel, Decision, KernelSettings, Role
from tests.colony.kernel.conftest import FakeClock, good_plan


def test_sandbox_can_pass_a_read_only_gate(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(good_plan(action_type="run_tests", evidence="{}"))
    assert verdict.decision is Decision.EXECUTE
    assert verdict.authorization is not None


def test_sandbox_refused_when_a_read_only_name_is_declared_side_effecting(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(good_plan(action_type="run_tests", side_effecting=True))
    assert (verdict.decision, verdict.reason) == (Decision.REFUSE, "SANDBOX role: no write-path gate passes")


def test_trusted_agent_executes_a_good_plan_and_reserves_budget(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.3)
    verdict = kernel.propose_action(good_plan(budget_estimate={"llm_calls": 3, "runtime_seconds": 20}))
    assert verdict.decision is Decision.EXECUTE, verdict.reason
    assert 0.55 <= verdict.gate_score <= 1.0
    assert verdict.budget_approved and verdict.falsification_severity == 0.0
    assert verdict.proposal_id and verdict.authorization
    # reservations are not usage until settled
    assert kernel.status().budget_usage["llm_calls"].used == 0


def test_high_finding_holds_with_required_evidence(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.6)
    verdict = kernel.propose_action(good_plan(evidence="{}"))
    assert verdict.decision is Decision.HOLD
    assert verdict.required_evidence == ["resolve_no_test_value"]
    assert verdict.falsification_severity == 0.45
    assert verdict.authorization is None
    assert kernel.pheromone_query("pkg.parser", "failure") == []  # only a refusal lays FAILURE


def test_critical_finding_refuses_even_a_guard(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.95)
    assert kernel.agent_profile("engineer-1").role is Role.GUARD_ANT
    verdict = kernel.propose_action(good_plan(rollback_plan="sudo rm -rf / --no-preserve-root"))
    assert verdict.decision is Decision.REFUSE
    assert verdict.required_evidence == ["resolve_security_risk"]
    assert kernel.pheromone_query("pkg.parser", "failure")[0].strength == 1.0


def test_failure_pressure_at_the_target_turns_execute_into_hold(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.3)
    assert kernel.propose_action(good_plan()).decision is Decision.EXECUTE
    kernel.deposit("pkg.parser", "failure", 9.0)
    verdict = kernel.propose_action(good_plan())
    assert verdict.decision is Decision.HOLD
    assert "investigate_failure_signals_at_target" in verdict.required_evidence


def test_budget_exhaustion_refuses(colony_home, clock: FakeClock) -> None:  # type: ignore[no-untyped-def]
    kernel = ColonyKernel(KernelSettings(home=colony_home, budget_llm_calls=2), clock=clock)
    kernel.set_trust("engineer-1", 0.3)
    plan = good_plan(budget_estimate={"llm_calls": 1, "runtime_seconds": 1})
    decisions = [kernel.propose_action(plan) for _ in range(3)]
    assert [v.decision for v in decisions] == [Decision.EXECUTE, Decision.EXECUTE, Decision.REFUSE]
    assert decisions[2].budget_approved is False
    assert decisions[2].required_evidence == ["wait_for_budget_period_rollover", "reduce_budget_estimate"]
    # the next period starts empty
    clock.advance(86400)
    assert kernel.propose_action(plan).decision is Decision.EXECUTE
    kernel.close()


def test_proposals_count_on_the_profile(kernel: ColonyKernel) -> None:
    for _ in range(4):
        kernel.propose_action(good_plan())
    assert kernel.agent_profile("engineer-1").total_proposals == 4


def test_evidence_keys_count_as_plan_keys(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.3)
    without = kernel.propose_action(good_plan(evidence=json.dumps({"test_ids": ["t"]})))
    with_tests = kernel.propose_action(good_plan(evidence=json.dumps({"tests": ["t"]})))
    assert (without.falsification_severity, with_tests.falsification_severity) == (0.45, 0.0)
