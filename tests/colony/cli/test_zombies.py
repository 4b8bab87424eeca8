"""The zombie-run automation on a real ``prefect server``: a Colony run whose process died is marked Crashed."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.events.actions import ChangeFlowRunState
from prefect.events.filters import EventFilter, EventNameFilter, EventRelatedFilter, EventResourceFilter
from pydantic import ValidationError

from colony.cli.zombies import (
    MISSED_HEARTBEATS,
    RECOVERY_AUTOMATION,
    ZOMBIE_AUTOMATION,
    RecoverySettings,
    ensure_automations,
    recovery_automation,
)
from flows._heartbeat import HEARTBEAT_EVENT, HEARTBEAT_SECONDS
from flows.deployments import FLOW_RUN_ENV
from tests.services.prefect import PrefectServer, prefect_api

pytestmark = pytest.mark.prefect_server

DOOMED_FLOW = """
import sys
import time

from prefect import flow, tags

from flows._heartbeat import beating


@flow(name="doomed-run")
@beating
def doomed() -> None:
    time.sleep(3600)


with tags("colony"):
    doomed.with_options(flow_run_name=sys.argv[1])()
"""


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with prefect_api(prefect_server.api_url):
        yield prefect_server


def test_ensuring_twice_leaves_one_of_each_automation(api: PrefectServer) -> None:
    ensure_automations()
    assert ensure_automations() == {ZOMBIE_AUTOMATION: "updated", RECOVERY_AUTOMATION: "updated"}
    with get_client(sync_client=True) as client:
        assert len(client.read_automations_by_name(ZOMBIE_AUTOMATION)) == 1
        assert len(client.read_automations_by_name(RECOVERY_AUTOMATION)) == 1


def poll_flow_run(name: str, seconds: float, done: str) -> FlowRun:
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name])))
            if runs and runs[0].state is not None and runs[0].state.name == done:
                return runs[0]
            assert time.monotonic() < deadline, f"the run never became {done}: {runs and runs[0].state}"
            time.sleep(1)


def wait_for_heartbeat(flow_run: FlowRun, seconds: float = 60) -> None:
    heartbeats = EventFilter(
        event=EventNameFilter(name=[HEARTBEAT_EVENT]),
        resource=EventResourceFilter(id=[f"prefect.flow-run.{flow_run.id}"]),
    )
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while not client.read_events(filter=heartbeats, limit=1).events:
            assert time.monotonic() < deadline, "the run sent no heartbeat"
            time.sleep(1)


def test_a_colony_run_whose_process_died_is_marked_crashed(api: PrefectServer, tmp_path: Path) -> None:
    ensure_automations()
    script = tmp_path / "doomed.py"
    script.write_text(DOOMED_FLOW)
    name = f"doomed-{uuid4()}"
    process = subprocess.Popen(
        [sys.executable, str(script), name],
        env=api.env(**FLOW_RUN_ENV),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        running = poll_flow_run(name, seconds=60, done="Running")
        wait_for_heartbeat(running)
    finally:
        process.kill()  # the machine is gone: no final state is ever reported
        process.wait()
    grace = MISSED_HEARTBEATS * HEARTBEAT_SECONDS + 90  # the automation's window, then its evaluation
    crashed = poll_flow_run(name, seconds=grace, done="Crashed")
    assert crashed.state is not None and "missing heartbeats" in (crashed.state.message or "")


QUICK_FLOW = """
import sys

from prefect import flow, tags

from flows._heartbeat import beating


@flow(name="quick-run")
@beating
def quick() -> None:
    pass


with tags("colony"):
    quick.with_options(flow_run_name=sys.argv[1])()
"""


def test_a_finished_run_is_never_judged_a_zombie(api: PrefectServer, tmp_path: Path) -> None:
    settings = RecoverySettings(zombie_seconds=HEARTBEAT_SECONDS + 1)
    ensure_automations(settings)
    script = tmp_path / "quick.py"
    script.write_text(QUICK_FLOW)
    names = [f"quick-{uuid4()}" for _ in range(4)]  # runs shorter than a beat: the race is at their end
    for name in names:  # each in a fresh process, as a worker runs them: its first beat is the slowest
        subprocess.run([sys.executable, str(script), name], env=api.env(**FLOW_RUN_ENV), check=True)
    runs = [poll_flow_run(name, seconds=60, done="Completed") for name in names]
    time.sleep(settings.zombie_seconds + 30)  # the automation's window, then its evaluation
    with get_client(sync_client=True) as client:
        for run in runs:
            actions = EventFilter(
                event=EventNameFilter(prefix=["prefect.automation.action"]),
                related=EventRelatedFilter(id=[f"prefect.flow-run.{run.id}"]),
            )
            assert client.read_events(filter=actions, limit=5).events == [], f"the automation acted on {run.name}"
            current = client.read_flow_run(run.id)
            assert current.state is not None and current.state.name == "Completed"


def test_a_zombie_window_within_one_heartbeat_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_ZOMBIE_SECONDS", str(HEARTBEAT_SECONDS))  # a live run would look dead
    with pytest.raises(ValidationError, match="zombie_seconds"):
        RecoverySettings()


def test_a_crashed_run_is_scheduled_again_only_on_its_first_starts() -> None:
    automation = recovery_automation(RecoverySettings(crash_retries=2))
    assert automation.enabled
    assert automation.trigger.match["prefect.run-count"] == ["1", "2"]  # type: ignore[union-attr]
    [action] = automation.actions
    assert isinstance(action, ChangeFlowRunState) and action.state is StateType.SCHEDULED
    assert not recovery_automation(RecoverySettings(crash_retries=0)).enabled
