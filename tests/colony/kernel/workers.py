"""Work one OS process does in the concurrency tests: propose, execute, report (and try a replay)."""

from __future__ import annotations

from colony.errors import AttestationError
from colony.kernel import ColonyKernel, Decision, KernelSettings

ESTIMATE = {"llm_calls": 1.0, "runtime_seconds": 1.0}


def propose_and_record(url: str, worker: int, rounds: int, agents: list[str], budget: float) -> dict[str, list[str]]:
    """Run ``rounds`` gated actions; returns the ids of what this process stored."""
    settings = KernelSettings(
        database_url=url, attestation_secret="shared-test-key", budget_llm_calls=budget, budget_runtime_seconds=1000
    )
    kernel = ColonyKernel(settings)
    done: dict[str, list[str]] = {"executed": [], "refused": [], "held": [], "consequences": [], "replays": []}
    try:
        for round_ in range(rounds):
            agent = agents[(worker + round_) % len(agents)]
            verdict = kernel.propose_action(
                {
                    "agent_id": agent,
                    "action_type": "patch_file",
                    "target": f"pkg.module{round_ % 3}",
                    "rationale": "Fix the parser regression found by the nightly test run",
                    "rollback_plan": "git revert the commit",
                    "evidence": '{"tests": ["tests/test_parser.py"]}',
                    "budget_estimate": ESTIMATE,
                }
            )
            assert verdict.proposal_id
            if verdict.decision is not Decision.EXECUTE:
                done["refused" if verdict.decision is Decision.REFUSE else "held"].append(verdict.proposal_id)
                continue
            done["executed"].append(verdict.proposal_id)
            report = {
                "agent_id": agent,
                "action_type": "patch_file",
                "target": f"pkg.module{round_ % 3}",
                "actual_outcome": "patched",
                "tests_passed": round_ % 4 != 3,
                "human_feedback": 0.5,
                **ESTIMATE,
            }
            record = kernel.record_outcome(report, authorization=verdict.authorization)
            done["consequences"].append(record.consequence_id)
            try:
                kernel.record_outcome(report, authorization=verdict.authorization)
            except AttestationError:
                done["replays"].append(verdict.proposal_id)
    finally:
        kernel.close()
    return done
