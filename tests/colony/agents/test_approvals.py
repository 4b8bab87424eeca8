"""Held calls in a model loop: HOLD -> deferred -> decided with ``colony approvals`` -> resumed; refusals as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ToolCallPart
from typer.testing import CliRunner

from colony.agents import decisions, run
from colony.cli import app
from colony.errors import ApprovalError
from colony.kernel import ColonyKernel
from tests.colony.agents.harness import CASE, Script

runner = CliRunner()


def write(path: Path) -> tuple[str, dict[str, Any]]:
    return ("write_entry", {"path": str(path), "text": "the redacted summary", **CASE})


def held_gate(kernel: ColonyKernel) -> None:
    """Trust enough to propose, failures at the tool: the gate holds the call for a person."""
    kernel.set_trust("clerk-1", 0.4)
    kernel.deposit("tool:ledger_double", "failure", 30.0)


async def hold(make_agent: Any, kernel: ColonyKernel, path: Path, after: list[Any]) -> tuple[Any, Script, Any, str]:
    held_gate(kernel)
    agent = make_agent()
    script = Script([[write(path)], *after])
    first = await run(agent, "Write the report file", model=script.model)
    assert isinstance(first.output, DeferredToolRequests)
    [call] = first.output.approvals
    approval_id = first.output.metadata[call.tool_call_id]["approval_id"]
    assert not path.exists()
    return agent, script, first, approval_id


async def test_a_held_call_is_approved_with_the_cli_then_the_resumed_run_executes_and_records(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    path = tmp_path / "report.txt"
    agent, script, first, approval_id = await hold(make_agent, kernel, path, ["The report is written."])
    [pending] = kernel.list_approvals(agent_id="clerk-1")
    assert (pending.approval_id, pending.tool, pending.action) == (approval_id, "ledger_double", "write_entry")
    with pytest.raises(ApprovalError, match=f"approval {approval_id} .* awaits a person"):
        await decisions(agent, first.output)

    decided = runner.invoke(
        app, ["approvals", "approve", approval_id, "--display-name", "ops@example.org", "--note", "ok"]
    )
    assert decided.exit_code == 0, decided.output
    results = await decisions(agent, first.output)
    second = await run(
        agent, None, model=script.model, message_history=first.all_messages(), deferred_tool_results=results
    )
    assert second.output == "The report is written."
    assert path.read_text() == "the redacted summary"
    [answer] = [p for m in second.new_messages() for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
    assert answer.content == {"path": str(path)}
    assert answer.metadata["approval"]["decided_by"] == "local-operator (as ops@example.org)"
    [consequence] = kernel.consequence_log("clerk-1")
    assert consequence.proposal_id == pending.proposal_id  # attested: the record settles the approved proposal
    assert kernel.get_approval(approval_id).executed_at is not None
    assert answer.metadata["record"]["consequence_id"] == consequence.consequence_id


async def test_a_rejected_call_reaches_the_model_as_the_rejection_and_nothing_runs(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    path = tmp_path / "report.txt"
    agent, script, first, approval_id = await hold(make_agent, kernel, path, ["Understood, not written."])
    decided = runner.invoke(
        app, ["approvals", "reject", approval_id, "--display-name", "ops@example.org", "--note", "wrong file"]
    )
    assert decided.exit_code == 0, decided.output
    second = await run(
        agent,
        None,
        model=script.model,
        message_history=first.all_messages(),
        deferred_tool_results=await decisions(agent, first.output),
    )
    assert second.output == "Understood, not written."
    assert not path.exists()
    [(_name, text)] = [r for r in script.returns() if r[0] == "write_entry"]
    assert "rejected by local-operator (as ops@example.org): wrong file" in text and "do not retry" in text
    [consequence] = kernel.consequence_log("clerk-1")
    assert consequence.kind.value == "rejection"


async def test_tool_approval_required_holds_even_a_pure_tool(make_agent: Any, kernel: ColonyKernel) -> None:
    kernel.set_trust("clerk-1", 0.8)
    agent = make_agent(tool_approval={"tool:unit_convert.convert_units": "required"})
    call = ("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m", **CASE})
    script = Script([[call], "converted"])
    first = await run(agent, "convert", model=script.model)
    assert isinstance(first.output, DeferredToolRequests)
    [request] = first.output.approvals
    approval_id = first.output.metadata[request.tool_call_id]["approval_id"]
    kernel.approve(approval_id, "ops@example.org", "")
    second = await run(
        agent,
        None,
        model=script.model,
        message_history=first.all_messages(),
        deferred_tool_results=await decisions(agent, first.output),
    )
    assert second.output == "converted"
    assert script.returns()[-1] == ("convert_units", {"value": 1000.0, "from_unit": "km", "to_unit": "m"})


async def test_a_refusal_reaches_the_model_as_text_not_a_retry(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    path = tmp_path / "report.txt"  # clerk-1 is new: a SANDBOX role, no write path passes
    script = Script([[write(path)], "I was refused."])
    result = await run(make_agent(), "write it", model=script.model)
    assert result.output == "I was refused."
    [(_name, text)] = script.returns()
    assert text.startswith("NOT RUN: Colony's gate refused ledger_double.write_entry")
    assert "SANDBOX role" in text and "What would change it:" in text
    [part] = [p for m in script.seen for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
    assert part.outcome == "success"  # an answer, not a retry prompt
    assert not path.exists()


async def test_a_governed_call_without_its_case_is_steered_to_give_one(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("clerk-1", 0.8)
    path = tmp_path / "report.txt"
    bare = ("write_entry", {"path": str(path), "text": "x"})
    script = Script([[bare], [write(path)], "written"])
    result = await run(make_agent(), "write it", model=script.model)
    assert result.output == "written"
    (_, steer), (_, answer) = script.returns()
    assert "rationale" in steer
    assert answer == {"path": str(path)}


async def test_a_held_call_naming_no_approval_request_cannot_be_decided(make_agent: Any) -> None:
    call = ToolCallPart("write_entry", {"path": "x", "text": "y"}, tool_call_id="call-1")
    with pytest.raises(ApprovalError, match=r"held call 'write_entry' \(call-1\) names no approval request"):
        await decisions(make_agent(), DeferredToolRequests(approvals=[call]))


async def test_a_tool_that_fails_reaches_the_model_as_the_failure_and_the_run_goes_on(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("clerk-1", 0.8)
    path = tmp_path / "report.txt"
    failing = ("write_entry", {"path": str(path), "text": "x", "fail": True, **CASE})
    script = Script([[failing], "The disk is gone; nothing was written."])
    result = await run(make_agent(), "write it", model=script.model)
    assert result.output == "The disk is gone; nothing was written."
    [part] = [p for m in script.seen for p in getattr(m, "parts", []) if p.part_kind == "tool-return"]
    assert part.outcome == "failed"
    assert part.content.startswith("ledger_double.write_entry failed: ") and "disk went away" in part.content
    assert not path.exists()
