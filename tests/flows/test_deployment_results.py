"""Deployment runs on a real ``prefect server``: the caller reads the result back; a resumed run keeps its verdict.

The deployments are served by a separate process (as a worker would run them) with its
own PREFECT_HOME; Colony's results go to the shared COLONY_HOME/results, as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.deployments import run_deployment
from prefect.flow_runs import resume_flow_run
from prefect.states import AwaitingRetry, Crashed

from colony.kernel import ColonyKernel, KernelSettings
from flows.gated_action import GatedActionSummary, Outcome
from flows.tool_call import ToolCallResult
from tests.flows.workers import Worker, errors_logged, final, wait_until_suspended

NAME = "results-test"
LEDGER_REQUEST = {
    "call": {"tool": "ledger_double", "arguments": {"text": "figures"}},
    "target": "ledger.served",
    "rationale": "Record the nightly figures in the ledger file for the audit trail",
    "rollback_plan": "erase_entry removes the written file again",
}


def test_a_caller_reads_the_result_of_a_deployment_run(
    workers: Callable[[str, str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    workers("worker-a", NAME)
    call = {"tool": "unit_convert", "arguments": {"value": 10, "from_unit": "miles", "to_unit": "km"}}
    converted = final(run_deployment(f"tool-call/{NAME}", parameters={"call": call}, timeout=0).id)
    result = converted.result()
    assert isinstance(result, ToolCallResult) and result.result["value"] == 16.0934

    ColonyKernel(KernelSettings(home=colony_home)).set_trust("engineer-7", 0.8)
    request = {**LEDGER_REQUEST, "agent_id": "engineer-7", "evidence": {"tests": ["tests/test_ledger.py"]}}
    request["call"] = {**LEDGER_REQUEST["call"], "arguments": {"path": str(tmp_path / "e.txt"), "text": "figures"}}  # type: ignore[dict-item]
    executed = final(run_deployment(f"gated-action/{NAME}", parameters={"request": request}, timeout=0).id)
    assert executed.name == "Executed" and executed.is_completed()
    summary = executed.result()
    assert isinstance(summary, GatedActionSummary) and summary.outcome is Outcome.EXECUTED

    refused = final(
        run_deployment(
            f"gated-action/{NAME}", parameters={"request": {**request, "agent_id": "stranger"}}, timeout=0
        ).id
    )
    assert refused.name == "Refused" and refused.is_failed()
    summary = refused.result(raise_on_failure=False)
    assert isinstance(summary, GatedActionSummary) and summary.outcome is Outcome.REFUSED


def test_a_refused_run_logs_its_end_not_a_crash(
    workers: Callable[[str, str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    worker = workers("worker-a", NAME)
    request = {**LEDGER_REQUEST, "agent_id": "stranger"}
    request["call"] = {**LEDGER_REQUEST["call"], "arguments": {"path": str(tmp_path / "e.txt"), "text": "figures"}}  # type: ignore[dict-item]
    run = run_deployment(f"gated-action/{NAME}", parameters={"request": request}, timeout=0)
    refused = final(run.id)
    assert refused.name == "Refused" and refused.is_failed()
    summary = refused.result(raise_on_failure=False)
    assert isinstance(summary, GatedActionSummary) and summary.outcome is Outcome.REFUSED
    assert errors_logged(worker, run.id) == []
    assert "Finished in state Refused(" in worker.log_path.read_text()


def test_a_held_run_resumed_on_another_worker_keeps_its_verdict(
    workers: Callable[[str, str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home))
    kernel.set_trust("engineer-8", 0.8)
    path = tmp_path / "entry.txt"
    request = {**LEDGER_REQUEST, "agent_id": "engineer-8"}  # no evidence of tests: the gate holds
    request["call"] = {**LEDGER_REQUEST["call"], "arguments": {"path": str(path), "text": "figures"}}  # type: ignore[dict-item]
    first = workers("worker-a", NAME)
    run = run_deployment(f"gated-action/{NAME}", parameters={"request": request}, timeout=0)
    wait_until_suspended(run.id)
    first.wait_until_idle()  # the suspended run's process has exited
    first.stop()  # the machine that asked the gate is gone
    workers("worker-b", NAME)  # another PREFECT_HOME: nothing of the first worker's local storage
    resume_flow_run(run.id, run_input={"approve": True, "reviewer": "ops@example.org", "note": "fine"})
    state = final(run.id)
    assert state.name == "Executed", state
    assert path.read_text() == "figures"
    assert kernel.proposal_counts("engineer-8").total == 1  # the resumed run did not ask the gate again
    [consequence] = kernel.consequence_log("engineer-8")
    assert consequence.human_feedback == 1.0
    for stored in (colony_home / "results").rglob("*"):
        if stored.is_file():
            record = json.loads(stored.read_text())
            assert record["metadata"]["serializer"]["type"] == "json", stored
            assert '"authorization": "v1.' not in record["result"], stored


def test_a_run_retried_after_its_record_reports_that_outcome_and_runs_nothing_again(
    workers: Callable[[str, str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home))
    kernel.set_trust("engineer-9", 0.8)
    path = tmp_path / "once.txt"
    request = {**LEDGER_REQUEST, "agent_id": "engineer-9", "evidence": {"tests": ["tests/test_ledger.py"]}}
    request["call"] = {**LEDGER_REQUEST["call"], "arguments": {"path": str(path), "text": "figures"}}  # type: ignore[dict-item]
    workers("worker-a", NAME)
    run = run_deployment(f"gated-action/{NAME}", parameters={"request": request}, timeout=0)
    first = final(run.id)
    assert first.name == "Executed"
    path.unlink()
    with get_client(sync_client=True) as client:  # the machine died after the record: crashed, then retried
        client.set_flow_run_state(run.id, Crashed(message="lost after its record"), force=True)
        client.set_flow_run_state(run.id, AwaitingRetry(), force=True)  # what the recovery automation does
    state = final(run.id)
    assert state.name == "Executed" and "this start ran nothing" in (state.message or ""), state
    assert not path.exists()  # the action did not run again
    assert kernel.proposal_counts("engineer-9").total == 1
    [consequence] = kernel.consequence_log("engineer-9")
    summary = state.result()
    assert isinstance(summary, GatedActionSummary) and summary.consequence_id == consequence.consequence_id
