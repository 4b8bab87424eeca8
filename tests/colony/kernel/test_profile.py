"""Reading an agent creates nothing: an unknown agent reads as the default SANDBOX profile."""

from __future__ import annotations

from colony.kernel import ColonyKernel, Role
from tests.colony.kernel.conftest import good_plan


def test_find_profile_creates_nothing(any_kernel: ColonyKernel) -> None:
    assert any_kernel.find_profile("ghost") is None
    assert any_kernel.status().role_distribution == {}
    counts = any_kernel.proposal_counts("ghost")
    assert (counts.total, counts.accepted, counts.rejected, counts.held) == (0, 0, 0, 0)
    assert any_kernel.find_profile("ghost") is None


def test_agent_profile_of_an_unknown_agent_is_the_default_and_stores_nothing(any_kernel: ColonyKernel) -> None:
    shown = any_kernel.agent_profile("newcomer")
    assert (shown.role, shown.trust_score, shown.total_proposals) == (Role.SANDBOX, 0.1, 0)
    assert any_kernel.find_profile("newcomer") is None
    assert any_kernel.status().role_distribution == {}


def test_find_profile_reads_what_agent_profile_reads(any_kernel: ColonyKernel) -> None:
    any_kernel.set_trust("engineer-1", 0.6)
    any_kernel.propose_action(good_plan())  # executed, so its passing outcome accepts it
    any_kernel.record_outcome(
        {"agent_id": "engineer-1", "action_type": "patch_file", "target": "pkg.parser", "actual_outcome": "ok",
         "tests_passed": True}
    )  # fmt: skip
    found = any_kernel.find_profile("engineer-1")
    assert found == any_kernel.agent_profile("engineer-1")
    assert found is not None and (found.total_proposals, found.accepted_proposals) == (1, 1)
