"""Deployments served by a separate process (as a worker would run them) against the session's ``prefect server``.

Each worker has its own PREFECT_HOME (so its own local Prefect storage) and the test's
environment (COLONY_HOME and any ``COLONY_*`` the test set), plus what the test adds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
from prefect.flow_runs import wait_for_flow_run
from prefect.input.run_input import keyset_from_paused_state
from prefect.states import State

from tests.services.prefect import PrefectServer, prefect_api

__all__ = ["Worker", "api", "errors_logged", "final", "group_members", "wait_until_suspended", "workers"]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with prefect_api(prefect_server.api_url):
        yield prefect_server


class Worker:
    """A process serving gated-action and tool-call as deployments ``name`` (``tests.flows.serve_runner``)."""

    def __init__(self, api: PrefectServer, home: Path, name: str) -> None:
        home.mkdir()
        self.log_path = home / "serve.log"
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.flows.serve_runner", name],
            cwd=REPO,
            # Polled every second, not every ten: a run (or a resumed one) starts without a test waiting on it.
            env={**api.env(), "PREFECT_HOME": str(home), "PREFECT_RUNNER_POLL_FREQUENCY": "1"},
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
def workers(api: PrefectServer, tmp_path: Path) -> Iterator[Callable[[str, str], Worker]]:
    """Start a worker: ``workers(label, deployment_name)``; all are stopped after the test."""
    started: list[Worker] = []

    def start(label: str, name: str) -> Worker:
        worker = Worker(api, tmp_path / label, name)
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


def wait_until_suspended(flow_run_id: UUID, seconds: float = 180) -> State[Any]:
    """The run's paused (suspended) state, once it has one and the input it waits for can be sent.

    Prefect stores a run's Suspended state before the schema of the input it waits for, and
    refuses a resume in between ("Run input schema not found").
    """
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            state = client.read_flow_run(flow_run_id).state
            if state is not None and state.is_paused() and _input_schema_stored(client, flow_run_id, state):
                return state
            time.sleep(1)
    raise AssertionError(f"flow run {flow_run_id} was never suspended")


def _input_schema_stored(client: SyncPrefectClient, flow_run_id: UUID, state: State[Any]) -> bool:
    try:
        client.read_flow_run_input(flow_run_id, keyset_from_paused_state(state)["schema"])
    except httpx.HTTPStatusError as error:
        if error.response.status_code == 404:
            return False
        raise
    return True


def errors_logged(worker: Worker, flow_run_id: UUID) -> list[str]:
    """What the run logged at ERROR or worse: on the API (its Logs tab) and in the worker's console.

    Read once the worker's run process has exited, since it sends its last logs as it exits.
    """
    worker.wait_until_idle()
    with get_client(sync_client=True) as client:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
    assert logs, f"flow run {flow_run_id} logged nothing"
    console = worker.log_path.read_text(errors="replace").splitlines()
    return [log.message for log in logs if log.level >= logging.ERROR] + [
        line for line in console if "| ERROR" in line or "| CRITICAL" in line or line.startswith("Traceback")
    ]
