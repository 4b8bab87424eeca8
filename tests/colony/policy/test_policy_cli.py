"""``colony policy validate | test | explain`` against the repository's catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from colony.cli import app
from tests.colony.policy.test_policy_decisions import guide_policies

runner = CliRunner()
CASES = """
- name: the clerk's short script by day runs
  principal: {agent: report-clerk}
  tool: shell_exec
  arguments: {script: date}
  context: {time: "2026-01-05T11:00:00Z"}
  expect: permit
- name: the clerk's long script is refused
  principal: {agent: report-clerk}
  tool: shell_exec
  arguments: {script: "%s"}
  context: {time: "2026-01-05T11:00:00Z"}
  expect: forbid
- name: the clerk runs no shell at night
  principal: {agent: report-clerk}
  tool: shell_exec
  arguments: {script: date}
  context: {time: "2026-01-05T23:00:00Z"}
  expect: forbid
- name: personal data needs the privacy group
  principal: {agent: analyst, groups: [privacy]}
  tool: pii_redact
  arguments: {text: "mail ann@example.org"}
  expect: permit
- name: a write under /srv/prod waits for a person
  principal: {agent: engineer-1}
  tool: shell_exec
  arguments: {script: "cp a /srv/prod/b"}
  context: {target: /srv/prod/b, time: "2026-01-05T11:00:00Z"}
  expect: hold
- name: only a guard_ant raises an estimate
  principal: {agent: engineer-1, role: dispatcher}
  tool: unit_convert
  arguments: {value: 1, from_unit: km, to_unit: m}
  context: {above_default: true}
  expect: forbid
""" % ("x" * 2100)


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    directory = tmp_path / "policies"
    directory.mkdir()
    (directory / "guide.cedar").write_text(guide_policies())
    (directory / "baseline.cedar").write_text("permit(principal, action, resource);\n")
    return directory


def test_validate_counts_the_policies_and_names_a_bad_line(rules: Path) -> None:
    done = runner.invoke(app, ["policy", "validate", "--dir", str(rules)])
    assert done.exit_code == 0 and done.stdout.startswith("6 policies valid")
    (rules / "bad.cedar").write_text('\npermit(principal, action, resource) when { resource.tags.contains("x") };\n')
    done = runner.invoke(app, ["policy", "validate", "--dir", str(rules), "--json"])
    assert done.exit_code == 1
    error = json.loads(done.stdout)["error"]
    assert error["type"] == "PolicyError" and error["file"].endswith("bad.cedar") and error["line"] == 2


def test_the_readme_rules_pass_their_cases(rules: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES)
    done = runner.invoke(app, ["policy", "test", str(cases), "--dir", str(rules)])
    assert done.exit_code == 0, done.stdout
    assert done.stdout.strip().endswith("6 passed, 0 failed")
    cases.write_text(CASES.replace("expect: hold", "expect: permit"))
    done = runner.invoke(app, ["policy", "test", str(cases), "--dir", str(rules)])
    assert done.exit_code == 1 and "FAIL a write under /srv/prod" in done.stdout
    assert "prod-writes-need-a-person" in done.stdout


def test_explain_names_the_deciding_and_the_considered_policies(rules: Path) -> None:
    done = runner.invoke(
        app,
        [
            "policy",
            "explain",
            "shell_exec",
            '{"script": "date"}',
            "--agent",
            "report-clerk",
            "--at",
            "2026-01-05T23:00:00Z",
            "--dir",
            str(rules),
            "--json",
        ],
    )
    assert done.exit_code == 0, done.stdout
    explained = json.loads(done.stdout)
    assert explained["decision"] == "forbid" and explained["policies"] == ["clerk-not-at-night"]
    assert len(explained["applicable"]) == 6  # two name shell_exec, four apply to every action


def test_explain_reads_a_recorded_call_from_the_audit_log(rules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from colony.kernel import ColonyKernel

    monkeypatch.setenv("COLONY_POLICIES", str(rules))
    kernel = ColonyKernel.from_env()
    kernel.set_trust("engineer-1", 0.95)
    kernel.close()
    case = ["--rationale", "Print the date for tonight's report header", "--rollback-plan", "Nothing to undo"]
    runner.invoke(app, ["tools", "call", "shell_exec", '{"script": "date"}', "--agent", "engineer-1", *case])
    # held by the gate or the policies, or run: either way the gate's decision is in the log
    kernel = ColonyKernel.from_env()
    [entry] = [entry for entry in kernel.audit_entries() if entry.event == "propose"]
    kernel.close()
    done = runner.invoke(app, ["policy", "explain", "--proposal", entry.detail["proposal_id"], "--json"])
    assert done.exit_code == 0, done.stdout
    assert json.loads(done.stdout)["decision"] == "permit"
    assert json.loads(done.stdout)["policies"] == ["baseline.cedar:1"]  # no @id: named by file and line
