"""The status snapshot: recent consequences newest first (at most 10), roles, and threads sharing a kernel."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from colony.kernel import ColonyKernel, Decision
from tests.colony.kernel.conftest import good_plan

REPORT = {"action_type": "patch_file", "target": "pkg.a", "actual_outcome": "done", "tests_passed": True}


def test_recent_consequences_newest_first(kernel: ColonyKernel) -> None:
    ids = [kernel.record_outcome({**REPORT, "agent_id": f"ant-{n % 3}"}).consequence_id for n in range(12)]
    recent = kernel.status().recent_consequences
    assert [r.consequence_id for r in recent] == ids[::-1][:10]
    assert kernel.status().role_distribution == {"repair_ant": 3}  # four passing outcomes each: 0.1 -> 0.258


def test_many_threads_share_one_kernel(kernel: ColonyKernel) -> None:
    held: list[bool] = []

    def report(n: int) -> str:
        verdict = kernel.propose_action(good_plan(agent_id="ant", target="pkg.a"))
        held.append(verdict.decision is not Decision.REFUSE)  # early ones may be refused or held: trust starts low
        return kernel.record_outcome({**REPORT, "agent_id": "ant"}).consequence_id

    with ThreadPoolExecutor(max_workers=24) as pool:
        ids = list(pool.map(report, range(48)))
    assert len(set(ids)) == 48
    assert len(kernel.consequence_log("ant")) == 48
    counts = kernel.proposal_counts("ant")
    accepted = sum(held)  # an EXECUTE or HOLD waits for a report; a refusal stays rejected whatever it says
    assert (counts.total, counts.accepted, counts.rejected, counts.held) == (48, accepted, 48 - accepted, 0)
    assert kernel.status().budget_usage["llm_calls"].reserved == 0
