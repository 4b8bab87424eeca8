"""The example agent end to end: redact, summarize, convert, and a held shell pipeline run in the sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai import DeferredToolRequests
from typer.testing import CliRunner

from colony.agents import Agent, assemble, decisions, load_agent_spec, run
from colony.cli import app
from colony.kernel import ColonyKernel
from colony.runtime import KernelProvider, Runtime
from tests.colony.agents.harness import Script

CLERK = Path(__file__).parents[3] / "agents" / "report_clerk.yaml"
NOTES = "Ann (ann@example.org, 555-123-4567) walked 12 miles of coast. The coast is eroding. Storms hit the coast."
SHELL_CASE = {
    "rationale": "Count how often the redacted notes mention the coast, for the report's tally",
    "rollback_plan": "Nothing to undo: the sandbox keeps no state between calls",
}


@pytest.fixture
async def clerk(busybox_image: str, kernel: ColonyKernel) -> AsyncIterator[Agent]:
    agent = assemble(load_agent_spec(CLERK), Runtime(kernels=KernelProvider(kernel)))  # the repository's catalog
    yield agent
    await agent.runtime.aclose()


async def test_the_report_clerk_runs_its_four_tools_and_its_shell_call_waits_for_a_person(
    clerk: Agent, kernel: ColonyKernel
) -> None:
    kernel.set_trust("report-clerk", 0.8)
    redacted = "Ann ([REDACTED], [REDACTED]) walked 12 miles of coast. The coast is eroding. Storms hit the coast."
    tally = {"script": "grep -o coast | wc -l", "stdin": redacted, **SHELL_CASE}
    script = Script(
        [
            [("redact_pii", {"text": NOTES})],
            [
                ("summarize_text", {"text": redacted, "max_sentences": 1}),
                ("to_metric", {"value": 12, "from_unit": "miles", "to_unit": "km"}),
            ],
            [("run_shell", tally)],
            "Report: 19.31 km of coast walked; the coast is mentioned 3 times.",
        ]
    )
    first = await run(clerk, "Report on the notes: " + NOTES, model=script.model)
    assert isinstance(first.output, DeferredToolRequests)  # tool_approval: required, though the gate would run it
    answers = dict(script.returns())
    assert answers["redact_pii"]["redacted_text"] == redacted
    assert round(answers["to_metric"]["value"], 2) == 19.31
    [call] = first.output.approvals
    approval_id = first.output.metadata[call.tool_call_id]["approval_id"]

    assert (
        CliRunner().invoke(app, ["approvals", "approve", approval_id, "--display-name", "ops@example.org"]).exit_code
        == 0
    )
    second = await run(
        clerk,
        None,
        model=script.model,
        message_history=first.all_messages(),
        deferred_tool_results=await decisions(clerk, first.output),
    )
    assert second.output.startswith("Report:")
    shell = dict(script.returns())["run_shell"]
    assert (shell["exit_code"], shell["stdout"].strip()) == (0, "3")
    [consequence] = kernel.consequence_log("report-clerk")
    assert consequence.proposal_id == kernel.get_approval(approval_id).proposal_id
