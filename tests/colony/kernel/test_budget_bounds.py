"""Estimates and reported usage are finite and sane: 1e400, NaN or a period's worth is a field error."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from colony.errors import KernelInputError
from colony.kernel import ColonyKernel
from colony.kernel.checks import MAX_AMOUNT
from tests.colony.kernel.conftest import good_plan

REPORT = {"agent_id": "a", "action_type": "patch_file", "target": "m", "actual_outcome": "ok", "tests_passed": True}


@pytest.mark.parametrize(
    ("estimate", "field"),
    [
        ({"llm_calls": math.inf}, "budget_estimate.llm_calls"),
        ({"llm_calls": json.loads("1e400")}, "budget_estimate.llm_calls"),  # what a JSON 1e400 parses to
        ({"runtime_seconds": -math.inf}, "budget_estimate.runtime_seconds"),
        ({"runtime_seconds": math.nan}, "budget_estimate.runtime_seconds"),
        ({"llm_calls": 1e300}, "budget_estimate.llm_calls"),
        ({"llm_calls": MAX_AMOUNT * 2}, "budget_estimate.llm_calls"),
        ({"llm_calls": 11}, "budget_estimate.llm_calls"),  # over this period's limit (10)
        ({"runtime_seconds": 3600.5}, "budget_estimate.runtime_seconds"),
    ],
)
def test_absurd_estimates_are_field_errors(any_kernel: ColonyKernel, estimate: dict[str, Any], field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        any_kernel.propose_action(good_plan(budget_estimate=estimate))
    assert caught.value.fields == [field]
    assert any_kernel.find_profile("engineer-1") is None  # nothing was written


def test_the_whole_period_is_still_a_valid_estimate(any_kernel: ColonyKernel) -> None:
    any_kernel.set_trust("engineer-1", 0.3)
    verdict = any_kernel.propose_action(good_plan(budget_estimate={"llm_calls": 10, "runtime_seconds": 3600}))
    assert verdict.budget_approved


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ({"llm_calls": math.inf}, "llm_calls"),
        ({"runtime_seconds": json.loads("1e400")}, "runtime_seconds"),
        ({"runtime_seconds": math.nan}, "runtime_seconds"),
        ({"llm_calls": 1e300}, "llm_calls"),
        ({"llm_calls": 10.5}, "llm_calls"),  # more than the whole period allows
    ],
)
def test_absurd_usage_is_a_field_error(any_kernel: ColonyKernel, usage: dict[str, Any], field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        any_kernel.record_outcome({**REPORT, **usage})
    assert caught.value.fields == [field]
    assert any_kernel.consequence_log("a") == []


def test_status_never_shows_infinity(any_kernel: ColonyKernel) -> None:
    for usage in ({"llm_calls": math.inf}, {"llm_calls": 1e308}):
        with pytest.raises(KernelInputError):
            any_kernel.record_outcome({**REPORT, **usage})
    any_kernel.record_outcome({**REPORT, "llm_calls": 10})
    text = json.dumps(any_kernel.status().model_dump(mode="json"), allow_nan=False)
    assert "Infinity" not in text and '"used": 10.0' in text


@pytest.mark.parametrize("estimate", [{"llm_calls": math.inf}, {"llm_calls": 1e300}])
def test_a_plan_estimate_is_checked_too(kernel: ColonyKernel, estimate: dict[str, float]) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.falsify_plan(json.dumps({"action_type": "patch_file", "budget_estimate": estimate}))
    assert caught.value.fields == ["plan_json.budget_estimate.llm_calls"]


def test_huge_integers_are_input_errors(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.falsify_plan('{"budget_estimate": {"llm_calls": 1' + "0" * 400 + "}}")
    assert caught.value.fields == ["plan_json.budget_estimate.llm_calls"]
    with pytest.raises(KernelInputError) as caught:  # past Python's int-to-text limit: still the field's error
        kernel.propose_action(good_plan(evidence='{"x": 1' + "0" * 5000 + "}"))
    assert caught.value.fields == ["evidence"]
    with pytest.raises(KernelInputError) as caught:
        kernel.propose_action(good_plan(budget_estimate={"llm_calls": 10**400}))
    assert caught.value.fields == ["budget_estimate.llm_calls"]
