"""``colony agent show|run|resume``: what the model sees, a real model loop, a held run carried on after a decision."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic_ai import DeferredToolRequests
from typer.testing import CliRunner

from colony.agents import AgentSpec, HeldRun, assemble, run
from colony.cli import app
from colony.kernel import ColonyKernel
from colony.runtime import Runtime
from tests.colony.agents.harness import CASE, ENTRIES, Script, write_registry
from tests.services import free_port

runner = CliRunner()
CLERK = Path(__file__).parents[3] / "agents" / "report_clerk.yaml"


def test_show_prints_what_the_model_sees() -> None:
    shown = runner.invoke(app, ["agent", "show", str(CLERK), "--json"])
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    tools = {tool["name"]: tool for tool in document["tools"]}
    assert {"redact_pii", "summarize_text", "to_metric", "run_shell"} <= set(tools)
    assert "convert_units" not in tools and tools["to_metric"]["description"].startswith("Convert one measurement")
    shell = tools["run_shell"]
    assert shell["governed"] and shell["needs_approval"] and shell["retries"] == 2
    assert {"script", "rationale", "rollback_plan"} <= set(shell["input_schema"]["properties"])
    assert not tools["redact_pii"]["governed"] and "rationale" not in tools["redact_pii"]["input_schema"]["properties"]
    text = runner.invoke(app, ["agent", "show", str(CLERK)])
    assert text.exit_code == 0 and "to_metric" in text.stdout and "Args:" in text.stdout


def test_a_bad_spec_is_one_line_naming_the_file(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("name: x\ncapabilities: [teleporter]\n")
    shown = runner.invoke(app, ["agent", "show", str(spec)])
    assert shown.exit_code == 1 and "unknown tool 'teleporter'" in shown.stderr


def test_run_drives_the_configured_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "converter.yaml"
    spec.write_text("name: converter\ncapabilities: [unit_convert]\n")
    monkeypatch.setenv("COLONY_MODEL", "test")  # pydantic-ai's TestModel: calls every tool, then answers
    done = runner.invoke(app, ["agent", "run", str(spec), "convert something", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["ok"] is True


def test_run_against_a_model_server_that_is_down_is_one_line_naming_model_and_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    spec = tmp_path / "local.yaml"
    spec.write_text(
        f"name: local\ncapabilities: [unit_convert]\nmodel: openai:local-model\n"
        f"model_api_key: local_llm_key\nmodel_base_url: {url}\n"
    )
    monkeypatch.delenv("COLONY_MODEL", raising=False)
    monkeypatch.setenv("COLONY_SECRET_LOCAL_LLM_KEY", "sk-local")
    done = runner.invoke(app, ["agent", "run", str(spec), "convert something"])
    assert done.exit_code == 1
    [line] = done.stderr.strip().splitlines()
    assert f"model 'local-model' at {url}/ failed" in line and "Traceback" not in done.output


def test_a_held_run_is_resumed_from_the_cli_after_colony_approvals_approve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, colony_home: Path
) -> None:
    write_registry(tmp_path, list(ENTRIES))
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    kernel = ColonyKernel.from_env()
    kernel.set_trust("clerk-1", 0.4)
    kernel.deposit("tool:ledger_double", "failure", 30.0)
    spec = tmp_path / "clerk.yaml"
    spec.write_text("name: clerk-1\ncapabilities: [ledger_double]\n")
    agent = assemble(AgentSpec(name="clerk-1", capabilities=("ledger_double",)), Runtime())
    path = tmp_path / "report.txt"
    script = Script([[("write_entry", {"path": str(path), "text": "figures", **CASE})]])
    first = asyncio.run(run(agent, "write the report", model=script.model))
    assert isinstance(first.output, DeferredToolRequests)
    held = HeldRun.of(agent.name, first.all_messages(), first.output, str(spec))
    held.save(colony_home / "agent-runs")
    [approval_id] = held.approval_ids

    monkeypatch.setenv("COLONY_MODEL", "test")
    pending = runner.invoke(app, ["agent", "resume", held.run_id])
    assert (
        pending.exit_code == 1 and f"approval {approval_id}" in pending.stderr and "awaits a person" in pending.stderr
    )
    approved = runner.invoke(app, ["approvals", "approve", approval_id, "--display-name", "ops@example.org"])
    assert approved.exit_code == 0 and f"then colony agent resume {held.run_id}" in approved.stderr
    assert "colony tools call" not in approved.stderr
    done = runner.invoke(app, ["agent", "resume", held.run_id, "--json"])
    assert done.exit_code == 0, done.output
    assert path.read_text() == "figures"
    [consequence] = kernel.consequence_log("clerk-1")
    assert consequence.proposal_id == kernel.get_approval(approval_id).proposal_id
    assert not (colony_home / "agent-runs" / f"{held.run_id}.json").exists()
    kernel.close()
