"""agent_run: an agent's model loop as a Prefect flow; one task run per tool call, held calls end the run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.states import State

from colony.errors import ToolUnavailableError
from colony.kernel import ColonyKernel
from flows.agent_run import AgentRunSummary, agent_run, run_agent
from tests.colony.agents.harness import CASE, Script
from tests.colony.surfaces.broken_tools import RAISES_AT_IMPORT, REASONS, broken_repo
from tests.flows.test_gated_action import WAITS, run_log

pytestmark = pytest.mark.usefixtures("prefect_harness")
MILES = {"value": 7.25, "from_unit": "miles", "to_unit": "km"}  # a value no other flow test converts


@flow(name="agent-run-scripted")
def scripted_run(spec: str, prompt: str, script: Any, resume_from: UUID | None = None) -> State[AgentRunSummary]:
    """agent_run's body, its model scripted (the deployment's flow calls the same function)."""
    return run_agent(spec, prompt, resume_from, model=script.model)


def spec_file(tmp_path: Path, name: str = "clerk-1") -> str:
    path = tmp_path / "clerk.yaml"
    path.write_text(f"name: {name}\ncapabilities: [unit_convert, pii_redact, ledger_double]\n")
    return str(path)


def task_runs(flow_run_id: UUID, prefixes: tuple[str, ...], count: int) -> list[tuple[str, str]]:
    """The run's task runs named with ``prefixes``, once ``count`` of them are recorded and final.

    The server records task runs from the events their engine sends, after the flow run returns.
    """
    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
            mine = [run for run in runs if run.name.startswith(prefixes)]
            if len(mine) >= count and all(run.state is not None and run.state.is_final() for run in mine):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    return sorted((run.name.rsplit("-", 1)[0], run.state.name if run.state else "") for run in mine)


def test_each_tool_call_is_a_task_run_and_a_repeated_deterministic_call_is_a_cache_hit(tmp_path: Path) -> None:
    script = Script(
        [
            [("convert_units", MILES)],
            [("convert_units", MILES), ("redact_pii", {"text": "mail ann@example.org"})],
            "11.67 km; the address is redacted.",
        ]
    )
    state = scripted_run(spec_file(tmp_path), "convert and redact", script, return_state=True)
    assert state.is_completed() and state.name == "Completed"
    summary = state.result()
    assert (summary.held, summary.output, summary.tool_calls) == (False, "11.67 km; the address is redacted.", 3)
    tools = task_runs(state.state_details.flow_run_id, ("unit_convert", "pii"), 3)
    assert tools == [
        ("pii_redact.redact_pii", "Completed"),
        ("unit_convert.convert_units", "Cached"),
        ("unit_convert.convert_units", "Completed"),
    ]
    assert [answer for _, answer in script.returns()][1]["value"] == round(7.25 * 1.609344, 4)


def test_an_agent_naming_a_tool_whose_entry_failed_to_load_fails_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(broken_repo(tmp_path / "repo")))
    spec = tmp_path / "broken.yaml"
    spec.write_text(f"name: clerk-1\ncapabilities: [unit_convert, {RAISES_AT_IMPORT}]\n")
    script = Script(["never asked"])
    state = scripted_run(str(spec), "convert", script, return_state=True)
    assert state.is_failed()
    expected = f"agent 'clerk-1' cannot start: tool '{RAISES_AT_IMPORT}' is unavailable"
    with pytest.raises(ToolUnavailableError, match=expected) as raised:
        state.result()
    assert REASONS[RAISES_AT_IMPORT] in str(raised.value) and script.seen == []


def test_a_held_call_ends_the_run_and_a_later_run_resumes_it_once_approved(tmp_path: Path) -> None:
    kernel = ColonyKernel.from_env()
    kernel.set_trust("clerk-1", 0.4)
    kernel.deposit("tool:ledger_double", "failure", 30.0)
    target = tmp_path / "report.txt"
    spec = spec_file(tmp_path)
    script = Script([[("write_entry", {"path": str(target), "text": "figures", **CASE})], "written"])
    held = scripted_run(spec, "write the report", script, return_state=True)
    assert held.is_completed() and held.name == "Held"
    summary = held.result()
    [approval_id] = summary.approvals
    run_id = held.state_details.flow_run_id
    assert kernel.get_approval(approval_id).flow_run_id == str(run_id)
    assert not target.exists()
    waits = WAITS.format(approval_id)
    [why] = [
        log.message
        for log in run_log(run_id, until=lambda logs: any(waits in log.message for log in logs))
        if waits in log.message
    ]
    assert why.startswith(f"{waits}: ledger_double.write_entry on target ") and why.endswith(
        f", then run agent-run again with resume_from={run_id}."
    ), why
    with get_client(sync_client=True) as client:  # the run is over: nothing waits on a worker
        [run] = client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])))
        assert run.state is not None and run.state.is_final()

    kernel.approve(approval_id, "ops@example.org", "fine")
    resumed = scripted_run(spec, "", script, resume_from=run_id, return_state=True)
    assert resumed.name == "Completed" and resumed.result().output == "written"
    assert target.read_text() == "figures"
    [consequence] = kernel.consequence_log("clerk-1")
    assert consequence.proposal_id == kernel.get_approval(approval_id).proposal_id
    tools = task_runs(resumed.state_details.flow_run_id, ("ledger",), 1)
    assert tools == [("ledger_double.write_entry", "Completed")]
    kernel.close()


def test_resuming_a_run_that_is_not_a_held_agent_run_is_refused(tmp_path: Path) -> None:
    answered = scripted_run(spec_file(tmp_path), "hi", Script(["hello"]), return_state=True)
    with pytest.raises(Exception, match="is not a held agent-run"):
        scripted_run(spec_file(tmp_path), "", Script([]), resume_from=answered.state_details.flow_run_id)


def test_the_deployment_flow_takes_a_spec_file_and_a_prompt() -> None:
    parameters = agent_run.parameters.model_dump()["properties"]
    assert set(parameters) == {"spec", "prompt", "resume_from"}
    assert "spec" in agent_run.parameters.required
