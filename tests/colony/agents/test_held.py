"""A held run kept as JSON: written, found by the approval it waits on, read back, or a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart

from colony.agents import HeldRun
from colony.errors import AgentSpecError


def held(approval_id: str, *, named: bool = True) -> HeldRun:
    call = ToolCallPart("write_entry", {"path": "/tmp/report.txt", "text": "x"}, tool_call_id="call-1")
    messages = [ModelRequest.user_text_prompt("Write the report"), ModelResponse(parts=[call])]
    metadata = {"call-1": {"approval_id": approval_id}} if named else {}
    return HeldRun.of("clerk-1", messages, DeferredToolRequests(approvals=[call], metadata=metadata), "agent.yaml")


def test_a_saved_run_reads_back_with_its_history_and_held_calls(tmp_path: Path) -> None:
    run = held("approval-1")
    path = run.save(tmp_path / "agent-runs")
    assert path == tmp_path / "agent-runs" / f"{run.run_id}.json"
    loaded = HeldRun.load(tmp_path / "agent-runs", run.run_id)
    assert loaded == run
    assert (loaded.agent, loaded.spec_path, loaded.approval_ids) == ("clerk-1", "agent.yaml", ["approval-1"])
    assert loaded.history()[0].parts[0].content == "Write the report"  # type: ignore[union-attr]
    [call] = loaded.deferred().approvals
    assert (call.tool_name, call.tool_call_id) == ("write_entry", "call-1")


def test_a_held_call_naming_no_approval_waits_on_nothing() -> None:
    assert held("approval-1", named=False).approval_ids == []


def test_the_run_waiting_on_an_approval_is_found_and_unreadable_files_are_skipped(tmp_path: Path) -> None:
    directory = tmp_path / "agent-runs"
    assert HeldRun.waiting_on(directory, "approval-2") is None  # no directory yet
    held("approval-1").save(directory)
    wanted = held("approval-2").save(directory)
    (directory / "corrupt.json").write_text("{not json", encoding="utf-8")
    (directory / "folder.json").mkdir()  # cannot be read as a file
    assert HeldRun.waiting_on(directory, "approval-2") == wanted.stem
    assert HeldRun.waiting_on(directory, "approval-3") is None


@pytest.mark.parametrize(
    ("run_id", "content", "message"),
    [
        ("../../etc/passwd", None, r"'../../etc/passwd' is not a held run's id \(32 hex digits\)"),
        ("0" * 32, None, f"no held run {'0' * 32} in "),
        ("1" * 32, "{not json", r"not a held run: <input>: Invalid JSON"),
        ("2" * 32, '{"run_id": "nope"}', "not a held run: run_id: String should match .*; agent: required argument"),
        ("3" * 32, "directory", "cannot read the held run: .*Is a directory"),
    ],
)
def test_a_run_that_cannot_be_loaded_is_an_error_naming_why(
    tmp_path: Path, run_id: str, content: str | None, message: str
) -> None:
    if content == "directory":
        (tmp_path / f"{run_id}.json").mkdir()
    elif content is not None:
        (tmp_path / f"{run_id}.json").write_text(content, encoding="utf-8")
    with pytest.raises(AgentSpecError, match=message) as raised:
        HeldRun.load(tmp_path, run_id)
    assert "\n" not in str(raised.value)
