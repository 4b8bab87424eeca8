"""The security vector sees `rm -rf /` however it is spelled and wherever it sits in a plan."""

from __future__ import annotations

import json
from typing import Any

import pytest

from colony.kernel import ColonyKernel, Decision
from colony.kernel.dangers import find_danger, recursive_root_delete, strings_in
from colony.kernel.falsification import FalsificationWorker
from tests.colony.kernel.conftest import good_plan

DELETES_ROOT = [
    "rm -rf /",
    "rm -fr /",
    "rm -r -f /",
    "rm -rf '/'",
    'rm -rf "/"',
    "rm --recursive --force /",
    "rm -R /*",
    "rm -rf -- /",
    "/bin/rm -rf /",
    "\\rm -rf /",
    "sudo rm -rf --no-preserve-root /",
    "cd /tmp && rm -rf //",
    "rm -r /.",
    "echo ok; rm -rf /",
    "true\nrm -rf /",
    "rm -rf \\\n  /",
    "sh -c 'rm -rf /'",
    "bash -lc \"sh -c 'rm -fr /'\"",
    "echo $(rm -rf /)",
    "echo `rm -rf /`",
    'rm -rf / "unbalanced',
]
ARGV = ["sh", "-c", "rm --recursive --force /"]
HARMLESS = [
    "rm -rf /tmp/build",
    "rm -f /",  # not recursive: removes no directory
    "rm -rf ./",
    "rm -rf build && ls /",
    "rm -rf /tmp/x\nls /",
    "ls -R /",
    "echo rm -rf",
    "perform -rf /",
    'rm -rf "/ tmp"',
    "git commit -m 'rm old files'",
]


@pytest.mark.parametrize("script", DELETES_ROOT)
def test_every_spelling_is_seen(script: str) -> None:
    assert recursive_root_delete(script)


@pytest.mark.parametrize("script", HARMLESS)
def test_harmless_commands_are_not(script: str) -> None:
    assert not recursive_root_delete(script)


def _security(plan: dict[str, Any]) -> dict[str, Any] | None:
    report = FalsificationWorker().falsify(plan)
    found = [f for f in report.findings if f.attack_vector.value == "security_risk"]
    return found[0].evidence | {"severity": found[0].severity.value} if found else None


@pytest.mark.parametrize(
    ("plan", "field"),
    [
        ({"rollback_plan": "rm -fr /"}, "rollback_plan"),
        ({"evidence": {"arguments": {"script": "rm -r -f /"}}}, "evidence.arguments.script"),
        ({"evidence": {"arguments": json.dumps({"script": 'rm -rf "/"'})}}, "evidence.arguments.script"),
        ({"evidence": {"call": json.dumps({"args": json.dumps({"argv": ARGV})})}}, "evidence.call.args.argv[2]"),
        ({"evidence": {"steps": ["ls", {"run": "sh -c 'rm -rf /'"}]}}, "evidence.steps[1].run"),
        ({"arguments": {"script": "rm -rf /"}}, "arguments.script"),  # any key of a bare plan
        ({"evidence": {"rm -rf /": True}}, "evidence.rm -rf /"),  # keys too
    ],
)
def test_the_plan_is_walked_value_by_value(plan: dict[str, Any], field: str) -> None:
    base = {"action_type": "patch_file", "target": "pkg.a", "rationale": "r" * 30, "rollback_plan": "git revert"}
    found = _security({**base, "tests": ["t"], **plan})
    assert found == {"field": field, "pattern": "recursive delete of /", "severity": "critical"}


def test_escaped_text_is_read_decoded() -> None:
    # the old regex ran over json.dumps output, where these escapes hid the words
    evidence = json.loads('{"cmd": "\\u0073udo make install", "x": "rm\\t-rf\\t/"}')
    assert find_danger({"evidence": evidence}, ()) == ("evidence.cmd", "privilege escalation")
    assert find_danger({"evidence": {"x": evidence["x"]}}, ()) == ("evidence.x", "recursive delete of /")


def test_strings_in_walks_deep_values_without_recursion() -> None:
    deep: Any = "rm -rf /"
    for _ in range(5000):
        deep = [deep]
    [(path, text)] = list(strings_in(deep, "evidence"))
    assert text == "rm -rf /" and path.startswith("evidence[0][0]")


def test_a_proposal_with_a_hidden_rm_is_refused_even_for_a_guard(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.95)
    arguments = json.dumps({"script": "cd /srv && rm -r -f /"})
    verdict = kernel.propose_action(good_plan(evidence=json.dumps({"tests": ["t"], "arguments": arguments})))
    assert verdict.decision is Decision.REFUSE
    assert verdict.required_evidence == ["resolve_security_risk"]
