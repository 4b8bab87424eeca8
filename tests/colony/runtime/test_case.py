"""The gate's case: one model, its bounds, the flat split and the properties every surface serves."""

from __future__ import annotations

import math

import pytest

from colony.errors import ToolInputError
from colony.runtime import GOVERNANCE_PROPERTIES, NO_CASE, CallRequest, GateCase, split_case


def test_the_served_properties_are_the_models_and_stay_as_pinned() -> None:
    assert GOVERNANCE_PROPERTIES == {
        "rationale": {
            "type": "string",
            "description": "Why this side-effecting call is necessary (shown to the gate; 20+ characters).",
        },
        "rollback_plan": {
            "type": "string",
            "description": "How to undo the call's effect if it goes wrong (the gate asks for one).",
        },
        "evidence": {
            "type": "object",
            "description": "Supporting evidence for the gate: test IDs under 'tests', PR URLs, error logs.",
        },
    }


def test_a_flat_call_is_split_into_its_arguments_and_its_case() -> None:
    arguments = {"path": "x", "rationale": "r" * 30, "evidence": {"tests": ["t"]}, "target": "the tool's own"}
    rest, case = split_case(arguments)
    assert rest == {"path": "x", "target": "the tool's own"}  # target and estimates are never taken from arguments
    assert case == GateCase(rationale="r" * 30, evidence={"tests": ["t"]})
    assert split_case({"path": "x"}) == ({"path": "x"}, NO_CASE) and "rationale" in arguments


@pytest.mark.parametrize(
    ("case", "field"),
    [
        ({"rationale": 1}, "rationale"),
        ({"rollback_plan": "x" * 10_001}, "rollback_plan"),
        ({"evidence": "tests pass"}, "evidence"),
        ({"evidence": {"log": "x" * 100_001}}, "evidence"),
        ({"target": ""}, "target"),
        ({"budget_estimate": {"llm_calls": -1}}, "budget_estimate.llm_calls"),
        ({"budget_estimate": {"runtime_seconds": math.inf}}, "budget_estimate.runtime_seconds"),
        ({"budget_estimate": {"llm_calls": True}}, "budget_estimate.llm_calls"),
        ({"budget_estimate": {"llm_calls": "1"}}, "budget_estimate.llm_calls"),
        ({"reason": "why"}, "reason"),
    ],
)
def test_a_bad_case_is_an_input_error_naming_its_field(case: dict[str, object], field: str) -> None:
    with pytest.raises(ToolInputError, match="case for the gate is invalid") as refused:
        GateCase.read(case)
    assert [error.field for error in refused.value.errors] == [field]


def test_a_call_request_reads_its_case_as_every_surface_does() -> None:
    with pytest.raises(ToolInputError) as refused:
        CallRequest("ledger", {}, evidence=["t"])  # type: ignore[arg-type]
    assert refused.value.errors[0].field == "evidence"
    request = CallRequest.with_case("ledger", {"a": 1}, GateCase(rationale="why", budget_estimate={"llm_calls": 2}))
    assert (request.rationale, request.budget_estimate, request.evidence) == ("why", {"llm_calls": 2.0}, None)
    assert CallRequest("ledger", {}, rationale="", rollback_plan="").rationale == ""  # empty is the gate's to judge
