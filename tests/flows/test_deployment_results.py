"""Deployment runs on a real ``prefect server``: the caller reads the result back; a resumed run keeps its verdict.

The deployments are served by a separate process (as a worker would run them) with its
own PREFECT_HOME; Colony's results go to the shared COLONY_HOME/results, as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.deployments import run_deployment
from prefect.flow_runs import resume_flow_run, wait_for_flow_run
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.states import AwaitingRetry, Crashed, State

from colony.kernel import ColonyKernel, KernelSettings
from flows.gated_action import GatedActionSummary, Outcome
from flows.tool_call import ToolCallResult
from tests.services.prefect import PrefectServer

pytestmark = pytest.mark.prefect_server
REPO = Path(__file__).resolve().parents[2]
NAME = "results-test"
LEDGER_REQUEST = {
    "call": {"tool": "ledger_double", "arguments": {"text": "figures"}},
    "target": "ledger.served",
    "rationale": "Record the nightly figures in the ledger file for the audit trail",
    "rollback_plan": "erase_entry removes the written file again",
}


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with temporary_settings({PREFECT_API_URL: prefect_server.api_url}):
        yield prefect_server


class Worker:
    """A process serving the deployments, with its own PREFECT_HOME (so its own local Prefect storage)."""

    def __init__(self, api: PrefectServer, home: Path) -> None:
        home.mkdir()
        self.log_path = home / "serve.log"
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.flows.serve_runner", NAME],
            cwd=REPO,
            env={**api.env(), "PREFECT_HOME": str(home)},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_until_served(self, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log_path.read_text()[-3000:]
            if "Your deployments are being served" in self.log_path.read_text(errors="replace"):
                return
            time.sleep(0.5)
        raise AssertionError(f"the deployments were never served: {self.log_path.read_text()[-3000:]}")

    def wait_until_idle(self, seconds: float = 120) -> None:
        """Until no flow run process of this worker is left (the serve process is alone in its group)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if group_members(self.process.pid) == [self.process.pid]:
                return
            time.sleep(0.5)
        raise AssertionError("the worker's flow run process never exited")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


def group_members(group: int) -> list[int]:
    """The live processes of process group ``group`` (from /proc: field 5 of ``stat`` is the group)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


@pytest.fixture
def workers(api: PrefectServer, tmp_path: Path) -> Iterator[Callable[[str], Worker]]:
    started: list[Worker] = []

    def start(name: str) -> Worker:
        worker = Worker(api, tmp_path / name)
        started.append(worker)
        worker.wait_until_served()
        return worker

    yield start
    for worker in started:
        worker.stop()


def final(flow_run_id: UUID) -> State[Any]:
    """The run's final state, as a caller in another process sees it."""
    state = asyncio.run(wait_for_flow_run(flow_run_id, timeout=180, poll_interval=1)).state
    assert state is not None
    return state


def test_a_caller_reads_the_result_of_a_deployment_run(
    workers: Callable[[str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    workers("worker-a")
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


def wait_until_suspended(flow_run_id: UUID, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            state = client.read_flow_run(flow_run_id).state
            if state is not None and state.is_paused():
                return
            time.sleep(1)
    raise AssertionError(f"flow run {flow_run_id} was never suspended")


def test_a_held_run_resumed_on_another_worker_keeps_its_verdict(
    workers: Callable[[str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home))
    kernel.set_trust("engineer-8", 0.8)
    path = tmp_path / "entry.txt"
    request = {**LEDGER_REQUEST, "agent_id": "engineer-8"}  # no evidence of tests: the gate holds
    request["call"] = {**LEDGER_REQUEST["call"], "arguments": {"path": str(path), "text": "figures"}}  # type: ignore[dict-item]
    first = workers("worker-a")
    run = run_deployment(f"gated-action/{NAME}", parameters={"request": request}, timeout=0)
    wait_until_suspended(run.id)
    first.wait_until_idle()  # the suspended run's process has exited
    first.stop()  # the machine that asked the gate is gone
    workers("worker-b")  # another PREFECT_HOME: nothing of the first worker's local storage
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
    workers: Callable[[str], Worker], colony_home: Path, tmp_path: Path
) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home))
    kernel.set_trust("engineer-9", 0.8)
    path = tmp_path / "once.txt"
    request = {**LEDGER_REQUEST, "agent_id": "engineer-9", "evidence": {"tests": ["tests/test_ledger.py"]}}
    request["call"] = {**LEDGER_REQUEST["call"], "arguments": {"path": str(path), "text": "figures"}}  # type: ignore[dict-item]
    workers("worker-a")
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
