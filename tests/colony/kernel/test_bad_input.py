"""Bad input is refused with a KernelInputError naming the field, and nothing is half-written."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from colony.errors import ColonyError, KernelInputError
from colony.kernel import ColonyKernel, ProposeActionRequest
from colony.kernel.store import tables
from tests.colony.kernel.conftest import good_plan

REPORT = {"agent_id": "a", "action_type": "patch_file", "target": "m", "actual_outcome": "ok", "tests_passed": True}


def _rows(kernel: ColonyKernel) -> tuple[int, int, int, int]:
    def count(connection: Any) -> tuple[int, int, int, int]:
        return tuple(  # type: ignore[return-value]
            connection.execute(select(func.count()).select_from(table)).scalar_one()
            for table in (tables.agents, tables.proposals, tables.consequences, tables.pheromones)
        )

    return kernel.store.run(count, write=False)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"agent_id": ""}, "agent_id"),
        ({"agent_id": 7}, "agent_id"),
        ({"agent_id": "x" * 257}, "agent_id"),
        ({"target": ""}, "target"),
        ({"rationale": "x" * 10_001}, "rationale"),
        ({"evidence": "{not json"}, "evidence"),
        ({"evidence": "[1, 2]"}, "evidence"),
        ({"evidence": "x" * 100_001}, "evidence"),
        ({"budget_estimate": {"gpus": 1}}, "budget_estimate"),
        ({"budget_estimate": {"llm_calls": -1}}, "budget_estimate.llm_calls"),
        ({"side_effecting": "maybe"}, "side_effecting"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_propose_action_bad_input(kernel: ColonyKernel, changes: dict[str, Any], field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.propose_action(good_plan(**changes))
    assert caught.value.fields == [field]
    assert field in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ColonyError)
    assert _rows(kernel) == (0, 0, 0, 0)


def test_propose_action_missing_fields_are_all_named(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.propose_action({"agent_id": "a"})
    assert caught.value.fields == ["action_type", "target", "rationale", "rollback_plan"]


def test_constructing_a_request_raises_the_kernel_error() -> None:
    with pytest.raises(KernelInputError, match="evidence"):
        ProposeActionRequest(agent_id="a", action_type="t", target="m", rationale="r", rollback_plan="", evidence="{")


def test_request_of_the_wrong_type(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.propose_action("patch everything")  # type: ignore[arg-type]
    assert caught.value.fields == ["request"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"human_feedback": 1.5}, "human_feedback"),
        ({"human_feedback": -1.01}, "human_feedback"),
        ({"human_feedback": "great"}, "human_feedback"),
        ({"tests_passed": "sometimes"}, "tests_passed"),
        ({"agent_id": ""}, "agent_id"),
        ({"actual_outcome": "x" * 10_001}, "actual_outcome"),
        ({"llm_calls": -2}, "llm_calls"),
    ],
)
def test_record_outcome_bad_input(kernel: ColonyKernel, changes: dict[str, Any], field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.record_outcome({**REPORT, **changes})
    assert caught.value.fields == [field]
    assert _rows(kernel) == (0, 0, 0, 0)


def test_record_outcome_missing_tests_passed(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.record_outcome({k: v for k, v in REPORT.items() if k != "tests_passed"})
    assert caught.value.fields == ["tests_passed"]


@pytest.mark.parametrize("agent_id", ["", "   ", None, 3, "x" * 257])
def test_agent_profile_bad_agent_id(kernel: ColonyKernel, agent_id: Any) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.agent_profile(agent_id)
    assert caught.value.fields == ["agent_id"]
    assert _rows(kernel) == (0, 0, 0, 0)


def test_pheromone_query_unknown_signal_type(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.pheromone_query("pkg.a", "panic")
    assert caught.value.fields == ["signal_type"]
    assert "failure, success, risk, need, dependency, human_priority" in caught.value.errors[0].expected  # type: ignore[operator]


def test_pheromone_query_empty_location(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.pheromone_query("", "failure")
    assert caught.value.fields == ["location"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"signal_type": "nope"}, "signal_type"),
        ({"amount": 0}, "amount"),
        ({"amount": "lots"}, "amount"),
        ({"source": "rumour"}, "source"),
        ({"decay_rate": "glacial"}, "decay_rate"),
    ],
)
def test_deposit_bad_input(kernel: ColonyKernel, kwargs: dict[str, Any], field: str) -> None:
    arguments: dict[str, Any] = {"signal_type": "risk", **kwargs}
    with pytest.raises(KernelInputError) as caught:
        kernel.deposit("pkg.a", **arguments)
    assert caught.value.fields == [field]


@pytest.mark.parametrize("trust", [-0.1, 1.1, "high", True])
def test_set_trust_bad_input(kernel: ColonyKernel, trust: Any) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.set_trust("a", trust)
    assert caught.value.fields == ["trust"]


def test_falsify_plan_not_a_string(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.falsify_plan({"action_type": "delete"})  # type: ignore[arg-type]
    assert caught.value.fields == ["plan_json"]


def test_errors_serialise_for_mcp_and_http(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.record_outcome({**REPORT, "human_feedback": 3})
    payload = caught.value.to_dict()
    assert payload["type"] == "KernelInputError"
    assert payload["errors"][0]["field"] == "human_feedback"
