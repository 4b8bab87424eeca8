"""Each plan field the falsifier reads has a declared type; a wrong one is a field error, never evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from colony.errors import KernelInputError
from colony.kernel import ColonyKernel, Decision
from tests.colony.kernel.conftest import good_plan

PLAN = {
    "action_type": "patch_file",
    "target": "pkg.parser",
    "rationale": "Fix the off-by-one error in the branch name parser reported by the nightly run",
    "rollback_plan": "git revert the commit",
    "tests": ["tests/test_parser.py::test_slash"],
}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"tests": "t"}, "tests"),
        ({"tests": ["t", 3]}, "tests"),
        ({"tests": [""]}, "tests"),
        ({"imports": "pkg"}, "imports"),
        ({"scope": "pkg/parser.py"}, "scope"),
        ({"callers": {"a": 1}}, "callers"),
        ({"dependencies": ["httpx==0.27"]}, "dependencies"),
        ({"dependencies": {"httpx": 0.27}}, "dependencies"),
        ({"owner": ["team"]}, "owner"),
        ({"sandbox": "true"}, "sandbox"),
        ({"metrics": "40% faster"}, "metrics"),
        ({"security_review": True}, "security_review"),
        ({"benchmark": 3}, "benchmark"),
        ({"target": None}, "target"),
    ],
)
def test_falsify_plan_names_the_field(kernel: ColonyKernel, changes: dict[str, Any], field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.falsify_plan(json.dumps({**PLAN, **changes}))
    assert caught.value.fields == [f"plan_json.{field}"]
    assert caught.value.errors[0].expected


def test_every_wrong_field_is_named_at_once(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.falsify_plan(json.dumps({**PLAN, "tests": "t", "imports": "pkg"}))
    assert caught.value.fields == ["plan_json.tests", "plan_json.imports"]


def test_null_is_absent_not_wrong(kernel: ColonyKernel) -> None:
    report = kernel.falsify_plan(json.dumps({**PLAN, "tests": None, "scope": None}))
    assert [f.attack_vector.value for f in report.findings] == ["no_test_value"]


def test_well_typed_values_still_count(kernel: ColonyKernel) -> None:
    plan = {**PLAN, "imports": ["pkg"], "dependencies": {"httpx": "==0.27.2"}, "sandbox": True}
    assert [f.attack_vector.value for f in kernel.falsify_plan(json.dumps(plan)).findings] == ["circular_architecture"]


@pytest.mark.parametrize(
    ("evidence", "field"),
    [({"tests": "t"}, "evidence.tests"), ({"imports": "pkg"}, "evidence.imports"), ({"scope": 3}, "evidence.scope")],
)
def test_a_proposals_evidence_keys_are_checked_too(kernel: ColonyKernel, evidence: dict[str, Any], field: str) -> None:
    with pytest.raises(KernelInputError) as caught:
        kernel.propose_action(good_plan(evidence=json.dumps(evidence)))
    assert caught.value.fields == [field]


def test_a_string_tests_key_no_longer_buys_an_execute(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.6)
    with pytest.raises(KernelInputError):
        kernel.propose_action(good_plan(evidence='{"tests": "t"}'))
    assert kernel.propose_action(good_plan(evidence='{"tests": ["t"]}')).decision is Decision.EXECUTE
    # evidence keys that the falsifier does not read may hold anything
    assert kernel.propose_action(good_plan(evidence='{"tests": ["t"], "action_type": 3}')).decision is Decision.EXECUTE
