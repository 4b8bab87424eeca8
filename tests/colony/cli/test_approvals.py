"""``colony approvals`` and the held path of ``colony tools call``, against a real kernel in COLONY_HOME."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings
from typer.testing import CliRunner

from colony.cli import app
from colony.kernel import ColonyKernel

runner = CliRunner()
CASE = [
    "--agent", "engineer-1",
    "--rationale", "Record the nightly figures in the ledger for the audit trail",
    "--rollback-plan", "erase_entry removes the written file again",
]  # fmt: skip


def call(path: Path, *extra: str):  # type: ignore[no-untyped-def]
    arguments = json.dumps({"path": str(path), "text": "figures"})
    return runner.invoke(app, ["tools", "call", "ledger_double", arguments, *CASE, *extra])


def approvals(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["approvals", *args])


def test_a_held_call_is_approved_from_the_cli_and_resubmitted_once(ledger: Path) -> None:
    held = call(ledger)
    assert held.exit_code == 2, held.output
    [pending] = json.loads(approvals("list", "--state", "pending", "--json").stdout)
    approval_id = pending["approval_id"]
    assert f"colony approvals approve {approval_id}" in held.stderr and f"--approval {approval_id}" in held.stderr
    assert not ledger.exists()

    shown = approvals("show", approval_id)
    assert shown.exit_code == 0 and "ledger_double.write_entry" in shown.stdout
    decided = approvals("approve", approval_id, "--display-name", "ops@example.org", "--note", "fine", "--json")
    assert json.loads(decided.stdout)["state"] == "approved"
    again = approvals("reject", approval_id)
    assert again.exit_code == 1 and "already approved by local-operator (as ops@example.org)" in again.stderr

    done = call(ledger, "--approval", approval_id, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["ok"] and ledger.read_text() == "figures"
    ledger.unlink()
    replay = call(ledger, "--approval", approval_id)
    assert replay.exit_code == 1 and "already executed" in replay.stderr and not ledger.exists()


def test_an_approved_call_that_ran_says_it_executed_and_who_approved_it(ledger: Path) -> None:
    approval_id = json.loads(call(ledger, "--json").stdout)["approval"]["approval_id"]
    approved = approvals("approve", approval_id, "--display-name", "ops@example.org")
    assert f"colony tools call ledger_double ... --approval {approval_id}" in approved.stderr
    done = call(ledger, "--approval", approval_id)
    assert done.exit_code == 0, done.output
    assert "gate: executed, approved by local-operator (as ops@example.org)" in done.stderr
    assert "gate: hold" not in done.stderr


def test_the_list_keeps_whole_names_and_shows_the_flow_run_when_piped(ledger: Path) -> None:
    approval_id = json.loads(call(ledger, "--json").stdout)["approval"]["approval_id"]
    listed = runner.invoke(app, ["approvals", "list"], env={"COLUMNS": None})  # piped, no width asked
    assert listed.exit_code == 0 and "flow run" in listed.stdout
    assert approval_id in listed.stdout and "engineer-1" in listed.stdout and "…" not in listed.stdout


def test_a_rejected_call_stays_unrun(ledger: Path) -> None:
    held = call(ledger, "--json")
    assert held.exit_code == 2
    document = json.loads(held.stdout)
    assert document["status"] == "held"
    approval_id = document["approval"]["approval_id"]
    assert approvals("reject", approval_id, "--note", "not tonight").exit_code == 0
    listed = approvals("list")
    assert listed.exit_code == 0 and "rejected" in listed.stdout
    result = call(ledger, "--approval", approval_id, "--json")
    assert result.exit_code == 1 and "rejected" in json.loads(result.stdout)["error"]["message"]
    assert not ledger.exists()


def test_unknown_ids_and_states_are_one_line_errors() -> None:
    missing = approvals("show", "no-such-id")
    assert missing.exit_code == 1 and missing.stderr.strip() == "error: no approval request 'no-such-id'"
    bad = approvals("list", "--state", "maybe")
    assert bad.exit_code == 1 and "unknown approval state" in bad.stderr


def test_profile_reads_without_creating_and_trust_sets_the_role() -> None:
    kernel = ColonyKernel.from_env()
    unknown = runner.invoke(app, ["kernel", "profile", "ghost", "--json"])
    assert unknown.exit_code == 0, unknown.stderr
    shown_unknown = json.loads(unknown.stdout)
    assert shown_unknown == kernel.agent_profile("ghost").model_dump(mode="json") | {
        "last_updated": shown_unknown["last_updated"]
    }  # the CLI says what colony_agent_profile says
    assert (shown_unknown["role"], shown_unknown["trust_score"]) == ("sandbox", 0.1)
    assert kernel.find_profile("ghost") is None
    set_ = runner.invoke(app, ["kernel", "trust", "ghost", "0.6", "--json"])
    assert set_.exit_code == 0 and json.loads(set_.stdout)["role"] == "memory_ant"
    shown = runner.invoke(app, ["kernel", "profile", "ghost", "--json"])
    assert json.loads(shown.stdout)["trust_score"] == 0.6
    bad = runner.invoke(app, ["kernel", "trust", "ghost", "2"])
    assert bad.exit_code == 1 and "trust" in bad.stderr
    kernel.close()


@pytest.fixture
def no_prefect_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No Prefect API named: not in the environment, nor in-process (the session's test harness names one)."""
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        yield


@pytest.mark.usefixtures("no_prefect_api")
def test_a_decision_on_a_linked_run_without_a_prefect_api_leaves_the_run_to_the_tick(ledger: Path) -> None:
    assert call(ledger).exit_code == 2
    [pending] = json.loads(approvals("list", "--state", "pending", "--json").stdout)
    kernel = ColonyKernel.from_env()
    kernel.attach_flow_run(pending["approval_id"], "6f1c2d0e-2f57-4e0b-9c39-2a7d0c1b5e11")
    kernel.close()
    decided = approvals("reject", pending["approval_id"], "--note", "not now", "--json")
    assert decided.exit_code == 0, decided.output
    assert json.loads(decided.stdout)["flow_run_id"] == "6f1c2d0e-2f57-4e0b-9c39-2a7d0c1b5e11"
    assert "the colony-tick deployment resumes it (set PREFECT_API_URL" in decided.stderr
