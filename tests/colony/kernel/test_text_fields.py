"""NUL characters in any kernel text field are an input error, the same on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from colony.errors import KernelInputError
from colony.kernel import ColonyKernel
from tests.colony.kernel.conftest import good_plan

NUL = "\x00"
REPORT = {"agent_id": "a", "action_type": "patch_file", "target": "m", "actual_outcome": "ok", "tests_passed": True}


@pytest.mark.parametrize("field", ["agent_id", "action_type", "target", "rationale", "rollback_plan", "evidence"])
def test_proposal_fields(any_kernel: ColonyKernel, field: str) -> None:
    value = '{"note": "a' + NUL + '"}' if field == "evidence" else f"text{NUL}more"
    with pytest.raises(KernelInputError) as caught:
        any_kernel.propose_action(good_plan(**{field: value}))
    assert caught.value.fields == [field]
    assert "NUL" in str(caught.value)


@pytest.mark.parametrize("field", ["agent_id", "action_type", "target", "actual_outcome"])
def test_report_fields(any_kernel: ColonyKernel, field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        any_kernel.record_outcome({**REPORT, field: f"{NUL}x"})
    assert caught.value.fields == [field]


CALLS: dict[str, tuple[str, Callable[[ColonyKernel, str], Any]]] = {
    "agent_profile": ("agent_id", lambda k, v: k.agent_profile(v)),
    "find_profile": ("agent_id", lambda k, v: k.find_profile(v)),
    "proposal_counts": ("agent_id", lambda k, v: k.proposal_counts(v)),
    "consequence_log": ("agent_id", lambda k, v: k.consequence_log(v)),
    "set_trust": ("agent_id", lambda k, v: k.set_trust(v, 0.5)),
    "pheromone_query": ("location", lambda k, v: k.pheromone_query(v, "failure")),
    "deposit": ("location", lambda k, v: k.deposit(v, "risk")),
    "tick": ("key", lambda k, v: k.tick(v)),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_other_operations(any_kernel: ColonyKernel, call: str) -> None:
    field, operation = CALLS[call]
    with pytest.raises(KernelInputError) as caught:
        operation(any_kernel, f"pkg{NUL}a")
    assert caught.value.fields == [field]
    assert any_kernel.status().tick_count == 0


def test_escaped_nul_in_evidence_is_only_data(any_kernel: ColonyKernel) -> None:
    verdict = any_kernel.propose_action(good_plan(evidence='{"tests": ["t"], "log": "\\u0000 in a log"}'))
    assert verdict.proposal_id
