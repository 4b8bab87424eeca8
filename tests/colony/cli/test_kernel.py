"""``colony kernel``: every subcommand against a real kernel in the test's COLONY_HOME."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from colony.cli import app

runner = CliRunner()
PROPOSAL = {
    "agent_id": "repair-agent-42",
    "action_type": "patch_file",
    "target": "codomyrmex.git_operations.core",
    "rationale": "Fix off-by-one error in branch name parser identified in test_branch_names.py test suite",
    "rollback_plan": "git revert HEAD~1 and re-run pytest to confirm regression is cleared",
}


def _json(*args: str) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["kernel", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_propose_status_tick_profile(tmp_path: Path) -> None:
    proposal = tmp_path / "proposal.json"
    proposal.write_text(json.dumps(PROPOSAL))
    verdict = _json("propose", str(proposal))
    assert (verdict["decision"], verdict["reason"]) == ("refuse", "SANDBOX role: no write-path gate passes")
    status = _json("status")
    assert status["pheromone_summary"]["top_signals"][0]["key"] == "codomyrmex.git_operations.core:failure"
    assert _json("tick")["tick_count"] == 1
    assert _json("profile", "repair-agent-42")["total_proposals"] == 1


def test_falsify_reads_a_file_or_stdin(tmp_path: Path) -> None:
    plan = {"action_type": "delete", "target": "codomyrmex.dark", "rationale": "Unused", "rollback_plan": ""}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    assert _json("falsify", str(path))["recommendation"] == "hold"
    result = runner.invoke(app, ["kernel", "falsify", "-", "--json"], input=json.dumps(plan))
    assert json.loads(result.output)["severity_score"] == 0.45


def test_pruning_and_text_output() -> None:
    assert _json("pruning")["total_candidates"] == 0
    for command in (["status"], ["tick"], ["trust", "a", "0.3"], ["profile", "a"], ["pruning"]):
        result = runner.invoke(app, ["kernel", *command])
        assert result.exit_code == 0, result.output


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["kernel", "falsify", str(tmp_path / "nope.json")])
    assert missing.exit_code == 1 and "cannot read" in missing.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**PROPOSAL, "evidence": "{oops"}))
    result = runner.invoke(app, ["kernel", "propose", str(bad), "--json"])
    assert result.exit_code == 1
    error = json.loads(result.output)["error"]
    assert (error["type"], error["errors"][0]["field"]) == ("KernelInputError", "evidence")
    (tmp_path / "list.json").write_text("[1]")
    assert "JSON object" in runner.invoke(app, ["kernel", "propose", str(tmp_path / "list.json")]).output


def test_tick_with_a_key_applies_once() -> None:
    assert _json("tick", "--key", "scheduled-2026-07-01T00:00")["tick_count"] == 1
    assert _json("tick", "--key", "scheduled-2026-07-01T00:00")["tick_count"] == 1
    assert _json("tick")["tick_count"] == 2
    bad = runner.invoke(app, ["kernel", "tick", "--key", " ", "--json"])
    assert bad.exit_code == 1 and json.loads(bad.output)["error"]["errors"][0]["field"] == "key"


def test_status_shows_reserved_next_to_used(colony_home: Path) -> None:
    from colony.kernel import ColonyKernel

    kernel = ColonyKernel.from_env()
    kernel.set_trust("repair-agent-42", 0.3)
    proposal = {**PROPOSAL, "evidence": '{"tests": ["t"]}', "budget_estimate": {"llm_calls": 3, "runtime_seconds": 7}}
    assert kernel.propose_action(proposal).decision.value == "execute"
    kernel.close()
    assert _json("status")["budget_usage"]["llm_calls"] == {"used": 0.0, "reserved": 3.0, "max": 500.0}
    table = runner.invoke(app, ["kernel", "status"], env={"COLUMNS": "200"})
    row = next(line for line in table.output.splitlines() if "llm_calls" in line)
    assert row.replace("│", " ").split() == ["llm_calls", "0", "3", "0", "500"]  # used, reserved, expired, max
