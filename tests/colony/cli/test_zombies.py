"""The zombie-run automation on a real ``prefect server``: a Colony run whose process died is marked Crashed."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import pytest
from prefect import flow
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.events import Event
from prefect.events.actions import ChangeFlowRunState
from prefect.events.filters import EventFilter, EventNameFilter, EventRelatedFilter, EventResourceFilter
from prefect.states import Pending
from pydantic import ValidationError

from colony.cli.zombies import (
    RECOVERY_AUTOMATION,
    START_AUTOMATION,
    ZOMBIE_AUTOMATION,
    ensure_automations,
    recovery_automation,
)
from flows._heartbeat import HEARTBEAT_EVENT, HeartbeatSettings
from flows._recovery import MISSED_HEARTBEATS, SHORTEST_WINDOW_SECONDS, RecoverySettings
from flows.deployments import FLOW_RUN_ENV
from tests.services.prefect import PrefectServer, prefect_api

BEAT = 4  # seconds between the runs' heartbeats here (COLONY_HEARTBEAT_SECONDS), not 30

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
    names = (ZOMBIE_AUTOMATION, START_AUTOMATION, RECOVERY_AUTOMATION)
    assert ensure_automations() == dict.fromkeys(names, "updated")
    with get_client(sync_client=True) as client:
        for name in names:
            assert len(client.read_automations_by_name(name)) == 1


def poll_flow_run(name: str, seconds: float, done: str) -> FlowRun:
    """The run named ``name`` once it has been in state ``done`` (its state then, as the run has it)."""
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name])))
            if runs:
                reached = [state for state in client.read_flow_run_states(runs[0].id) if state.name == done]
                if reached:
                    return runs[0].model_copy(update={"state": reached[-1]})
            assert time.monotonic() < deadline, f"the run never became {done}: {runs and runs[0].state}"
            time.sleep(0.5)


def wait_for_heartbeats(flow_run: FlowRun, count: int = 1, seconds: float = 180) -> None:
    """Wait for the run's heartbeat events (a loaded machine's event pipeline can take over a minute).

    The filter is built for each read: its ``occurred.until`` defaults to the time it is built,
    and a filter built once would never see a beat sent after it.
    """

    def heartbeats() -> EventFilter:
        return EventFilter(
            event=EventNameFilter(name=[HEARTBEAT_EVENT]),
            resource=EventResourceFilter(id=[f"prefect.flow-run.{flow_run.id}"]),
        )

    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while len(client.read_events(filter=heartbeats(), limit=count).events) < count:
            assert time.monotonic() < deadline, f"the run sent fewer than {count} heartbeats in {seconds} s"
            time.sleep(0.5)


def automation_actions(client: SyncPrefectClient, run: FlowRun) -> list[Event]:
    """The automations' actions on ``run`` (executed or failed), as the events API has them."""
    actions = EventFilter(
        event=EventNameFilter(prefix=["prefect.automation.action"]),
        related=EventRelatedFilter(id=[f"prefect.flow-run.{run.id}"]),
    )
    return client.read_events(filter=actions, limit=5).events


def run_environment(api: PrefectServer) -> dict[str, str]:
    return api.env(**FLOW_RUN_ENV, COLONY_HEARTBEAT_SECONDS=str(BEAT))


def start_doomed_run(api: PrefectServer, script: Path) -> tuple[subprocess.Popen[bytes], FlowRun]:
    """A Colony run, once it is Running and has beaten (every BEAT seconds), and its process."""
    script.write_text(DOOMED_FLOW)
    name = f"doomed-{uuid4()}"
    process = subprocess.Popen(
        [sys.executable, str(script), name],
        env=run_environment(api),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        running = poll_flow_run(name, seconds=60, done="Running")
        wait_for_heartbeats(running)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process, running


def crash(process: subprocess.Popen[bytes], run: FlowRun, settings: RecoverySettings) -> FlowRun:
    """Kill the run's process (the machine is gone: no final state is reported); the run once marked Crashed."""
    process.kill()
    process.wait()
    grace = settings.zombie_seconds + 90  # the automation's window, then its evaluation
    return poll_flow_run(run.name, seconds=grace, done="Crashed")


def test_a_colony_run_whose_process_died_is_marked_crashed(api: PrefectServer, tmp_path: Path) -> None:
    settings = RecoverySettings(heartbeat_seconds=BEAT)
    assert settings.zombie_seconds == MISSED_HEARTBEATS * BEAT
    ensure_automations(settings)
    process, running = start_doomed_run(api, tmp_path / "doomed.py")
    crashed = crash(process, running, settings)
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
    settings = RecoverySettings(heartbeat_seconds=BEAT, zombie_seconds=SHORTEST_WINDOW_SECONDS)  # 2.5 beats
    ensure_automations(settings)
    script = tmp_path / "quick.py"
    script.write_text(QUICK_FLOW)
    names = [f"quick-{uuid4()}" for _ in range(4)]  # runs shorter than a beat: the race is at their end
    for name in names:  # each in a fresh process, as a worker runs them: its first beat is the slowest
        subprocess.run([sys.executable, str(script), name], env=run_environment(api), check=True)
    runs = [poll_flow_run(name, seconds=60, done="Completed") for name in names]
    # A run that dies after them: once the automation has acted on it, it has judged every
    # window that closed before its own, and the events API holds what it did.
    process, doomed = start_doomed_run(api, tmp_path / "doomed.py")
    crash(process, doomed, settings)
    with get_client(sync_client=True) as client:
        deadline = time.monotonic() + 60
        while not automation_actions(client, doomed):
            assert time.monotonic() < deadline, "the automation's action on the dead run never reached the events"
            time.sleep(0.5)
        for run in runs:
            assert automation_actions(client, run) == [], f"the automation acted on {run.name}"
            current = client.read_flow_run(run.id)
            assert current.state is not None and current.state.name == "Completed"


@flow(name="never-started")
def never_started() -> None:
    """A flow whose run a worker claims and whose process never starts (the machine was lost)."""


def test_a_claimed_run_that_never_beat_is_marked_crashed_and_a_beating_one_is_not(
    api: PrefectServer, tmp_path: Path
) -> None:
    settings = RecoverySettings(heartbeat_seconds=BEAT, start_seconds=SHORTEST_WINDOW_SECONDS)
    ensure_automations(settings)
    process, alive = start_doomed_run(api, tmp_path / "doomed.py")  # claimed (Pending) first, and beating
    try:
        with get_client(sync_client=True) as client:
            lost = client.create_flow_run(never_started, name=f"lost-{uuid4()}", tags=["colony"], state=Pending())
        crashed = poll_flow_run(lost.name, seconds=settings.start_seconds + 90, done="Crashed")
        assert crashed.state is not None and "no heartbeat within 10 s" in (crashed.state.message or "")
        assert crashed.run_count == 0  # never ran: the recovery automation leaves it for a person
        with get_client(sync_client=True) as client:
            # The beating run's start window closed first, and its beat answered it.
            assert automation_actions(client, alive) == []
            current = client.read_flow_run(alive.id)
            assert current.state is not None and current.state.name == "Running"
    finally:
        process.kill()
        process.wait()


def test_a_zombie_window_within_one_heartbeat_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    beat = HeartbeatSettings().heartbeat_seconds
    monkeypatch.setenv("COLONY_ZOMBIE_SECONDS", str(beat))  # a live run would look dead
    with pytest.raises(ValidationError, match="zombie_seconds"):
        RecoverySettings()


def test_the_zombie_window_follows_the_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_HEARTBEAT_SECONDS", "5")
    assert RecoverySettings().zombie_seconds == MISSED_HEARTBEATS * 5
    monkeypatch.setenv("COLONY_HEARTBEAT_SECONDS", "2")
    assert RecoverySettings().zombie_seconds == SHORTEST_WINDOW_SECONDS  # Prefect's shortest window
    monkeypatch.setenv("COLONY_ZOMBIE_SECONDS", "5")
    with pytest.raises(ValidationError, match=r"zombie_seconds .* at least"):
        RecoverySettings()
    monkeypatch.setenv("COLONY_HEARTBEAT_SECONDS", "12")
    monkeypatch.setenv("COLONY_ZOMBIE_SECONDS", "12")
    with pytest.raises(ValidationError, match=r"zombie_seconds .* more than one heartbeat"):
        RecoverySettings()


def test_a_crashed_run_is_scheduled_again_only_on_its_first_starts() -> None:
    automation = recovery_automation(RecoverySettings(crash_retries=2))
    assert automation.enabled
    assert automation.trigger.match["prefect.run-count"] == ["1", "2"]  # type: ignore[union-attr]  # never 0: unbounded
    [action] = automation.actions
    assert isinstance(action, ChangeFlowRunState) and action.state is StateType.SCHEDULED
    assert not recovery_automation(RecoverySettings(crash_retries=0)).enabled
