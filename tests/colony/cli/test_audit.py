"""``colony audit list|export|verify`` over a real kernel in COLONY_HOME, after decisions made from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from colony.cli import app
from colony.kernel import ColonyKernel
from colony.kernel.auditing import refusal_record
from tests.colony.cli.test_approvals import CASE, approvals, call

runner = CliRunner()


def audit(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["audit", *args])


def decisions_from_the_cli(ledger: Path) -> None:
    """HOLD -> approve -> run once; HOLD -> reject; a resubmission for another agent (403)."""
    assert call(ledger).exit_code == 2
    [pending] = json.loads(approvals("list", "--state", "pending", "--json").stdout)
    assert approvals("approve", pending["approval_id"], "--display-name", "ops@example.org").exit_code == 0
    assert call(ledger, "--approval", pending["approval_id"]).exit_code == 0
    assert call(ledger).exit_code == 2
    [second] = json.loads(approvals("list", "--state", "pending", "--json").stdout)
    assert approvals("reject", second["approval_id"], "--note", "not tonight").exit_code == 0
    other = [*CASE[:1], "engineer-2", *CASE[2:]]
    arguments = json.dumps({"path": str(ledger), "text": "figures"})
    stolen = runner.invoke(
        app, ["tools", "call", "ledger_double", arguments, *other, "--approval", pending["approval_id"]]
    )
    assert stolen.exit_code != 0 and "engineer-1" in stolen.output


def exported(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_json_lines_of_every_decision_and_verify_passes(ledger: Path, tmp_path: Path) -> None:
    decisions_from_the_cli(ledger)
    out = tmp_path / "audit.jsonl"
    done = audit("export", "--since", "1", "--output", str(out))
    assert done.exit_code == 0, done.output
    entries = exported(out)
    assert [(e["event"], e["verdict"]) for e in entries] == [
        ("propose", "hold"),
        ("approve", "approved"),
        ("claim", "claimed"),
        ("propose", "hold"),
        ("reject", "rejected"),
        ("refused", "forbidden"),
    ]
    assert (entries[1]["who"], entries[2]["who"]) == ("local-operator", "engineer-1")  # who decided, who ran it
    assert entries[1]["detail"]["display_name"] == "ops@example.org"  # type: ignore[index]
    assert (entries[5]["who"], entries[5]["on_behalf"]) == (entries[1]["who"], "engineer-2")
    assert f"last entry 6, hash {entries[5]['hash']}" in done.stderr

    verified = audit("verify")
    assert verified.exit_code == 0
    assert verified.stdout.strip() == f"ok: 6 entries verify; head 6 {entries[5]['hash']}"
    assert audit("verify", "--head", str(entries[2]["hash"])).exit_code == 0

    later = audit("export", "--since", "5")
    assert [json.loads(line)["seq"] for line in later.stdout.splitlines()] == [5, 6]
    when = str(entries[4]["at"])
    assert [json.loads(line)["seq"] for line in audit("export", "--since", when).stdout.splitlines()] == [5, 6]


def listed(*args: str) -> list[dict[str, object]]:
    done = audit("list", *args, "--json")
    assert done.exit_code == 0, done.output
    entries: list[dict[str, object]] = json.loads(done.stdout)
    return entries


def test_list_shows_the_newest_entries_first_filtered_as_asked(ledger: Path) -> None:
    decisions_from_the_cli(ledger)
    entries = [json.loads(line) for line in audit("export").stdout.splitlines()]
    assert listed() == entries[::-1]
    assert [e["seq"] for e in listed("--limit", "2")] == [6, 5]
    assert [e["seq"] for e in listed("--who", "engineer-1")] == [3]  # ran the approved call itself
    assert [e["seq"] for e in listed("--agent", "engineer-2")] == [6]
    assert [e["seq"] for e in listed("--event", "propose", "--verdict", "hold")] == [4, 1]
    assert [e["seq"] for e in listed("--verdict", "forbidden", "--tool", "ledger_double")] == [6]
    assert [e["seq"] for e in listed("--tool", "ledger_double")] == [6, 5, 4, 3, 2, 1]
    assert listed("--tool", "ledger") == []
    third = str(entries[2]["at"])
    assert [e["seq"] for e in listed("--until", third)] == [3, 2, 1]
    assert [e["seq"] for e in listed("--since", third, "--until", third)] == [3]
    assert len(listed("--since", "1h")) == 6 and listed("--until", "1h") == []

    table = audit("list", "--event", "propose")
    assert table.exit_code == 0
    rows = [line for line in table.stdout.splitlines() if "write_entry tool:ledger_double" in line]
    assert [row.split()[1] for row in rows] == ["4", "1"]  # one line each, newest first
    assert "the newest 2 that match" in audit("list", "--limit", "2").stdout
    assert audit("list", "--who", "nobody").stderr.strip() == "no audit entries match"


def test_list_off_a_terminal_never_cuts_a_value_short(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    what = "call [red]" + "/".join(f"segment-{n}" for n in range(60))  # longer than a wide terminal; no markup
    kernel = ColonyKernel.from_env()
    kernel.record_refusals([refusal_record("anonymous", None, what, 401, "no token", client="203.0.113.9")])
    kernel.close()
    piped = audit("list")
    [row] = [line for line in piped.stdout.splitlines() if "anonymous" in line]
    assert what in row and "unauthenticated" in row
    monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal: values fold onto more lines, never cut
    narrow = audit("list").stdout
    last_column = "".join(line.split("│")[-2].strip() for line in narrow.splitlines() if line.startswith("│"))
    assert "…" not in narrow and what.replace(" ", "") in last_column


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--since", "yesterday"], "since: 'yesterday' is neither an ISO 8601 time"),
        (["--until", "2026-13-01"], "until: '2026-13-01' is neither"),
        (["--since", "2026-12-02", "--until", "2026-12-01"], "since: is after until"),
        (["--event", "proposed"], "event: 'proposed' is not one of propose, approve"),
        (["--verdict", "allowed"], "verdict: 'allowed' is not one of execute, hold"),
    ],
)
def test_list_names_a_bad_filter_in_one_line(ledger: Path, args: list[str], named: str) -> None:
    done = audit("list", *args)
    assert done.exit_code == 1 and done.stdout == ""
    assert done.stderr.startswith(f"error: {named}") and done.stderr.count("\n") == 1, done.stderr
    as_json = json.loads(audit("list", *args, "--json").stdout)
    assert as_json["ok"] is False and named in as_json["error"]["message"]


def test_list_refuses_a_limit_out_of_bounds(ledger: Path) -> None:
    for limit in ("0", "1001", "many"):
        done = audit("list", "--limit", limit)
        assert done.exit_code == 2 and "--limit" in done.stderr


def test_verify_fails_naming_the_entry_that_was_changed_or_removed(ledger: Path) -> None:
    decisions_from_the_cli(ledger)
    head = json.loads(audit("verify", "--json").stdout)["head_hash"]
    kernel = ColonyKernel.from_env()
    kernel.store.run(lambda c: c.execute(text("UPDATE colony_audit_log SET verdict = 'approved' WHERE seq = 5")))
    changed = audit("verify")
    assert changed.exit_code == 1 and "entry 5 was changed" in changed.stderr
    kernel.store.run(lambda c: c.execute(text("DELETE FROM colony_audit_log WHERE seq >= 5")))
    kernel.store.run(
        lambda c: c.execute(
            text("UPDATE colony_audit_head SET seq = 4, hash = (SELECT hash FROM colony_audit_log WHERE seq = 4)")
        )
    )
    kernel.close()
    assert audit("verify").exit_code == 0  # a cut tail with its head rewritten: only a kept head shows it
    cut = audit("verify", "--head", head)
    assert cut.exit_code == 1 and f"the kept head {head} is not in the log" in cut.stderr
    as_json = json.loads(audit("verify", "--head", head, "--json").stdout)
    assert as_json["ok"] is False and as_json["head_seq"] == 4


def test_bad_arguments_are_named(ledger: Path) -> None:
    since = audit("export", "--since", "yesterday")
    assert since.exit_code == 1 and "'yesterday' is neither a seq" in since.stderr
    head = audit("verify", "--head", "abc")
    assert head.exit_code == 1 and "head" in head.stderr
    assert "'abc' is not a sha256 hex digest" in head.stderr


def test_a_proposal_from_the_cli_names_the_local_operator_as_who_acted(ledger: Path, tmp_path: Path) -> None:
    plan = {
        "agent_id": "engineer-1",
        "action_type": "patch_file",
        "target": "pkg.mod",
        "rationale": "Fix the off-by-one in the pager",
        "rollback_plan": "git revert",
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    assert runner.invoke(app, ["kernel", "propose", str(path), "--json"]).exit_code == 0
    path.write_text(json.dumps({**plan, "acted_by": "someone-else"}))
    forged = runner.invoke(app, ["kernel", "propose", str(path)])
    assert forged.exit_code == 1 and "acted_by is not a proposal's field" in forged.stderr
    [entry] = [json.loads(line) for line in audit("export").stdout.splitlines()]
    assert (entry["event"], entry["who"], entry["on_behalf"]) == ("propose", "local-operator", "engineer-1")
