"""Every worked example of seed 001, reproduced against the real kernel on SQLite."""

from __future__ import annotations

import json
import uuid

from colony.kernel import ColonyKernel, DecayRate, Decision, Role, SignalSource
from tests.colony.kernel.conftest import FakeClock

PROPOSE_EXAMPLE = {
    "agent_id": "repair-agent-42",
    "action_type": "patch_file",
    "target": "codomyrmex.git_operations.core",
    "rationale": "Fix off-by-one error in branch name parser identified in test_branch_names.py test suite",
    "rollback_plan": "git revert HEAD~1 and re-run pytest to confirm regression is cleared",
    "evidence": '{"test_ids": ["test_branch_names.py::test_slash_in_name"], "error": "IndexError at line 47"}',
}
RECORD_EXAMPLE = {
    "agent_id": "repair-agent-42",
    "action_type": "patch_file",
    "target": "codomyrmex.git_operations.core",
    "actual_outcome": "Patch applied; all 42 git_operations tests pass; no regressions detected",
    "tests_passed": True,
    "human_feedback": 1.0,
}
FALSIFY_EXAMPLE = (
    '{"action_type": "delete", "target": "codomyrmex.dark", "rationale": "Unused", "rollback_plan": "", '
    '"budget_estimate": {"llm_calls": 0, "runtime_seconds": 0}}'
)


def test_propose_action_example(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(PROPOSE_EXAMPLE)
    assert verdict.seed_dict() == {
        "decision": "refuse",
        "gate_score": 0.0,
        "reason": "SANDBOX role: no write-path gate passes",
        "required_evidence": ["earn_higher_role_via_trust_growth", "accumulate_accepted_proposals"],
        "budget_approved": True,
        "falsification_severity": 0.45,
    }
    assert verdict.authorization is None
    # "On REFUSE, deposits a FAILURE pheromone at the target location."
    [signal] = kernel.pheromone_query("codomyrmex.git_operations.core", "failure")
    assert signal.strength == 1.0
    assert signal.evidence == {"proposal_id": verdict.proposal_id, "action_type": "patch_file"}


def test_record_outcome_example(kernel: ColonyKernel) -> None:
    record = kernel.record_outcome(RECORD_EXAMPLE)
    dumped = record.seed_dict()
    assert set(dumped) == {"status", "consequence_id", "trust_score", "role"}
    assert uuid.UUID(dumped["consequence_id"])
    assert (dumped["status"], dumped["trust_score"], dumped["role"]) == ("recorded", 0.173, "sandbox")
    # SUCCESS at the target and a DEPENDENCY trace.
    assert kernel.pheromone_query("codomyrmex.git_operations.core", "success")[0].strength == 1.0
    [dependency] = kernel.pheromone_query("codomyrmex.git_operations.core", "dependency")
    assert dependency.decay_rate == 0.2


def test_agent_profile_example(kernel: ColonyKernel, clock: FakeClock) -> None:
    # Two refused patches and one read the gate let through: only the last can be accepted.
    for _ in range(2):
        kernel.propose_action(PROPOSE_EXAMPLE)
    kernel.propose_action({**PROPOSE_EXAMPLE, "action_type": "run_tests"})
    clock.now = 1751234567.0
    record = kernel.record_outcome(RECORD_EXAMPLE)
    assert kernel.agent_profile("repair-agent-42").model_dump(mode="json") == {
        "agent_id": "repair-agent-42",
        "role": "sandbox",
        "trust_score": 0.173,
        "total_proposals": 3,
        "accepted_proposals": 1,
        "consequence_history": [record.consequence_id],
        "last_updated": 1751234567.0,
    }


def test_unknown_agent_reads_as_a_sandbox_profile(kernel: ColonyKernel) -> None:
    profile = kernel.agent_profile("newcomer")
    assert (profile.role, profile.trust_score, profile.total_proposals) == (Role.SANDBOX, 0.1, 0)
    assert kernel.status().role_distribution == {}


def _seed_status_field(kernel: ColonyKernel, clock: FakeClock) -> None:
    clock.now = 1751234400.0
    kernel.deposit("codomyrmex.crypto.hmac", "failure", 2.1, source=SignalSource.TEST)
    clock.now = 1751234500.0
    kernel.deposit("codomyrmex.git_operations.core", "success", 3.8, source=SignalSource.TEST)


def test_status_example(kernel: ColonyKernel, clock: FakeClock) -> None:
    _seed_status_field(kernel, clock)
    for agent in ("a", "b", "c"):
        kernel.set_trust(agent, 0.1)
    # the example's usage, charged the way an unattested report with usage charges it
    kernel.store.run(lambda c: kernel.ledger.charge(c, {"llm_calls": 9, "runtime_seconds": 47.2}, clock.now))
    assert kernel.status().model_dump(mode="json") == {
        "pheromone_summary": {
            "total_signals": 2,
            "top_signals": [
                {
                    "key": "codomyrmex.git_operations.core:success",
                    "location": "codomyrmex.git_operations.core",
                    "signal_type": "success",
                    "strength": 3.8,
                    "updated_at": 1751234500.0,
                },
                {
                    "key": "codomyrmex.crypto.hmac:failure",
                    "location": "codomyrmex.crypto.hmac",
                    "signal_type": "failure",
                    "strength": 2.1,
                    "updated_at": 1751234400.0,
                },
            ],
        },
        "tick_count": 0,
        "budget_usage": {"llm_calls": {"used": 9, "max": 500}, "runtime_seconds": {"used": 47.2, "max": 3600.0}},
        "role_distribution": {"sandbox": 3},
        "recent_consequences": [],
        "pruning_candidates_count": 0,
    }


def test_tick_example_normal_trace_38_to_342(kernel: ColonyKernel) -> None:
    kernel.deposit("codomyrmex.git_operations.core", "success", 3.8, decay_rate=DecayRate.NORMAL)
    status = kernel.tick()
    assert status.tick_count == 1
    assert status.pheromone_summary.total_signals == 1
    [top] = status.pheromone_summary.top_signals
    assert (top.key, top.strength, top.updated_at) == ("codomyrmex.git_operations.core:success", 3.42, 1751234500.0)


def test_pheromone_query_example(kernel: ColonyKernel, clock: FakeClock) -> None:
    clock.now = 1751234400.0
    evidence = {"proposal_id": "a1b2c3d4-...", "action_type": "patch_file"}
    kernel.deposit("codomyrmex.git_operations.core", "failure", 2.1, source="test", evidence=evidence)
    result = [s.model_dump(mode="json") for s in kernel.pheromone_query("codomyrmex.git_operations.core", "failure")]
    assert result == [
        {
            "location": "codomyrmex.git_operations.core",
            "signal_type": "failure",
            "strength": 2.1,
            "decay_rate": 1.0,
            "source": "test",
            "evidence": evidence,
            "last_reinforced": 1751234400.0,
        }
    ]
    assert kernel.pheromone_query("codomyrmex.git_operations.core", "success") == []


def test_falsify_plan_example(kernel: ColonyKernel) -> None:
    report = kernel.falsify_plan(FALSIFY_EXAMPLE)
    assert report.model_dump(mode="json") == {
        "findings": [
            {
                "claim": "plan specifies a safe rollback path",
                "attack_vector": "no_rollback",
                "severity": "high",
                "evidence": {"rollback_plan": ""},
                "remediation": "Provide a concrete rollback_plan describing how to undo the action.",
            },
            {
                "claim": "The plan includes automated test coverage.",
                "attack_vector": "no_test_value",
                "severity": "high",
                "evidence": {"tests": "<key absent>"},
                "remediation": "Add a `tests` key listing the test file paths or test IDs that will exercise the "
                "changed behaviour.",
            },
            {
                "claim": "action blast radius is bounded and reversible",
                "attack_vector": "scope_creep",
                "severity": "high",
                "evidence": {"action_type": "delete", "target": "codomyrmex.dark"},
                "remediation": "Destructive actions require a `scope` field enumerating all affected files, callers, "
                "and dependent modules.",
            },
        ],
        "severity_score": 0.45,
        "recommendation": "hold",
    }
    assert report.recommendation is Decision.HOLD


def test_pruning_report_example_fresh_field(kernel: ColonyKernel, clock: FakeClock) -> None:
    clock.now = 1751234700.0
    assert kernel.pruning_report().model_dump(mode="json") == {
        "candidates": [],
        "total_candidates": 0,
        "generated_at": 1751234700.0,
    }


def test_outputs_are_json_round_trippable(kernel: ColonyKernel) -> None:
    verdict = kernel.propose_action(PROPOSE_EXAMPLE)
    assert json.loads(json.dumps(verdict.seed_dict())) == verdict.seed_dict()
