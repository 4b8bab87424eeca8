"""Roles and trust: thresholds, the update rule, role changes, the 200-entry history."""

from __future__ import annotations

import pytest

from colony.kernel import ColonyKernel, Role
from colony.kernel.roles import role_for, updated_trust

REPORT = {"agent_id": "ant", "action_type": "patch_file", "target": "pkg.a", "actual_outcome": "done"}


@pytest.mark.parametrize(
    ("trust", "role"),
    [(0.0, "sandbox"), (0.249, "sandbox"), (0.25, "repair_ant"), (0.5, "memory_ant"), (0.7, "dispatcher"),
     (0.85, "guard_ant"), (1.0, "guard_ant")],
)  # fmt: skip
def test_thresholds(trust: float, role: str) -> None:
    assert role_for(trust).value == role


def test_update_rule() -> None:
    assert updated_trust(0.1, True, 1.0) == 0.173  # seed 001
    assert updated_trust(0.1, True, 0.0) == round(0.1 + 0.081 * 0.6 * 0.9, 3)
    assert updated_trust(0.5, False, -1.0) == 0.4  # quick to lose: 20% of what is held
    assert updated_trust(0.5, False, 0.0) == round(0.5 - 0.2 * 0.6 * 0.5, 3)
    assert updated_trust(1.0, True, 1.0) == 1.0 and updated_trust(0.0, False, -1.0) == 0.0


def test_three_good_outcomes_make_a_repair_ant(kernel: ColonyKernel) -> None:
    roles = [kernel.record_outcome({**REPORT, "tests_passed": True, "human_feedback": 1.0}).role for _ in range(3)]
    assert roles == [Role.SANDBOX, Role.SANDBOX, Role.REPAIR_ANT]
    assert kernel.agent_profile("ant").trust_score == 0.302
    demoted = kernel.record_outcome({**REPORT, "tests_passed": False, "human_feedback": -1.0})
    assert (demoted.trust_score, demoted.role) == (0.242, Role.SANDBOX)
    # reports with no proposal behind them move trust and history, never the proposal counters
    profile = kernel.agent_profile("ant")
    assert (profile.total_proposals, profile.accepted_proposals, len(profile.consequence_history)) == (0, 0, 4)


def test_history_keeps_the_last_200(kernel: ColonyKernel) -> None:
    ids = [kernel.record_outcome({**REPORT, "tests_passed": True}).consequence_id for _ in range(203)]
    history = kernel.agent_profile("ant").consequence_history
    assert history == ids[-200:]
    assert len(kernel.consequence_log("ant")) == 203
