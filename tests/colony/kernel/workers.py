"""Work one OS process does in the concurrency tests: propose, execute, report (and try a replay)."""

from __future__ import annotations

import time

from colony.errors import ApprovalError, AttestationError
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


def tick_with_key(url: str, key: str) -> int:
    """One keyed tick in its own process; the tick count it saw."""
    kernel = ColonyKernel(KernelSettings(database_url=url))
    try:
        return kernel.tick(key).tick_count
    finally:
        kernel.close()


def _kernel_at(url: str, now: float, ttl: float) -> ColonyKernel:
    settings = KernelSettings(
        database_url=url, attestation_secret="shared-test-key", attestation_ttl_seconds=ttl, budget_llm_calls=1000
    )
    return ColonyKernel(settings, clock=lambda: now)


def execute_and_maybe_report(url: str, worker: int, rounds: int, now: float, ttl: float) -> dict[str, list[str]]:
    """Propose ``rounds`` actions at ``now``; report a third attested, a third unattested, leave a third open."""
    kernel = _kernel_at(url, now, ttl)
    agent = f"ant-{worker}"
    done: dict[str, list[str]] = {"attested": [], "matched": [], "left": []}
    try:
        for round_ in range(rounds):
            target = f"pkg.module{round_}"
            verdict = kernel.propose_action(
                {
                    "agent_id": agent,
                    "action_type": "patch_file",
                    "target": target,
                    "rationale": "Fix the parser regression found by the nightly test run",
                    "rollback_plan": "git revert the commit",
                    "evidence": '{"tests": ["tests/test_parser.py"]}',
                    "budget_estimate": ESTIMATE,
                }
            )
            assert verdict.decision is Decision.EXECUTE and verdict.proposal_id, verdict.reason
            report = {"agent_id": agent, "action_type": "patch_file", "target": target,
                      "actual_outcome": "patched", "tests_passed": True}  # fmt: skip
            if round_ % 3 == 0:
                kernel.record_outcome(report, authorization=verdict.authorization)
                done["attested"].append(verdict.proposal_id)
            elif round_ % 3 == 1:
                kernel.record_outcome(report)
                done["matched"].append(verdict.proposal_id)
            else:
                done["left"].append(verdict.proposal_id)
    finally:
        kernel.close()
    return done


def sweep_later(url: str, worker: int, now: float, ttl: float) -> None:
    """After the authorizations lapsed: tick, propose (lazy expiry), read the status, all at once with others."""
    kernel = _kernel_at(url, now, ttl)
    try:
        if worker % 3 == 0:
            kernel.tick()
        elif worker % 3 == 1:
            kernel.propose_action(
                {"agent_id": "late", "action_type": "read_file", "target": "pkg.a", "rationale": "look at the parser",
                 "rollback_plan": ""}
            )  # fmt: skip
        else:
            kernel.status()
    finally:
        kernel.close()


def decide_approval(url: str, approval_id: str, reviewer: str, approve: bool, start: float) -> str:
    """Approve or reject one request in its own process, as close to ``start`` as the others; what happened."""
    kernel = ColonyKernel(KernelSettings(database_url=url, attestation_secret="shared-test-key"))
    try:
        while time.time() < start:
            time.sleep(0.001)
        decide = kernel.approve if approve else kernel.reject
        return decide(approval_id, reviewer, f"decided by {reviewer}").state.value
    except ApprovalError as error:
        return f"error:{error.state}"
    finally:
        kernel.close()


def claim_approved(url: str, approval_id: str, digest: str, start: float) -> str:
    """Claim an approved request's authorization in its own process; 'claimed' or the error's state."""
    kernel = ColonyKernel(KernelSettings(database_url=url, attestation_secret="shared-test-key"))
    try:
        while time.time() < start:
            time.sleep(0.001)
        kernel.claim_approval(
            approval_id,
            agent_id="engineer-1",
            tool="files",
            target="pkg.parser",
            action="patch_file",
            arguments_digest=digest,
        )
        return "claimed"
    except ApprovalError as error:
        return f"error:{error.state}"
    finally:
        kernel.close()


def propose_audited(url: str, worker: int, rounds: int) -> int:
    """Propose and record a refusal ``rounds`` times, as fast as possible; how many audit entries that wrote."""
    from colony.kernel import AuditRecord

    kernel = ColonyKernel(KernelSettings(database_url=url, attestation_secret="shared-test-key"))
    try:
        for round_ in range(rounds):
            kernel.propose_action(
                {
                    "agent_id": "ant-a",
                    "action_type": "patch_file",
                    "target": f"pkg.module{round_ % 3}",
                    "rationale": "Fix the parser regression found by the nightly test run",
                    "rollback_plan": "git revert the commit",
                    "evidence": '{"tests": ["tests/test_parser.py"]}',
                }
            )
            refusal = AuditRecord("refused", f"w{worker}", f"w{worker}", "call t", "forbidden", {"worker": worker})
            kernel.record_refusals([refusal])
    finally:
        kernel.close()
    return rounds * 2
