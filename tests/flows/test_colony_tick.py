"""colony_tick and pruning_report: the kernel's upkeep, shown as Prefect artifacts and events."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import pytest
from prefect import flow
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.client.schemas.objects import Artifact, FlowRun
from prefect.events import emit_event
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
from prefect.states import Pending, Running, Submitting
from prefect.variables import Variable

from colony.kernel import KernelSettings, RecordOutcomeRequest, SignalType
from flows._events import ROLES_CHANGED
from flows._heartbeat import HEARTBEAT_EVENT
from flows._recovery import SHORTEST_WINDOW_SECONDS, lost_start_message
from flows.colony_tick import ROLES_VARIABLE, colony_tick
from flows.pruning_report import pruning_report
from tasks.kernel import kernel_for

pytestmark = pytest.mark.usefixtures("prefect_harness")


def latest_artifact(key: str) -> Artifact:
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])))
    assert artifacts, f"no artifact {key!r}"
    return max(artifacts, key=lambda artifact: artifact.created)


def test_a_tick_advances_the_kernel_and_publishes_the_status() -> None:
    kernel = kernel_for(KernelSettings())
    kernel.deposit("pkg.hot", SignalType.FAILURE, 4.0)
    kernel.set_trust("ant-1", 0.5)
    status = colony_tick()
    assert status.tick_count == 1 == kernel.status().tick_count
    [signal] = status.pheromone_summary.top_signals
    assert signal.location == "pkg.hot" and signal.strength < 4.0  # evaporated
    signals = latest_artifact("colony-signals")
    assert signals.type == "table" and "pkg.hot" in str(signals.data)
    assert "llm_calls" in str(latest_artifact("colony-budget").data)
    assert "repair_ant" in str(latest_artifact("colony-roles").data) or "memory_ant" in str(
        latest_artifact("colony-roles").data
    )
    assert "after tick 1" in str(latest_artifact("colony-status").data)
    assert Variable.get(ROLES_VARIABLE) == status.role_distribution


def test_a_role_change_between_ticks_updates_the_remembered_roles() -> None:
    kernel = kernel_for(KernelSettings())
    kernel.set_trust("ant-2", 0.5)
    first = colony_tick()
    kernel.set_trust("ant-3", 0.5)
    second = colony_tick()
    assert first.role_distribution != second.role_distribution
    assert Variable.get(ROLES_VARIABLE) == second.role_distribution
    wanted = EventFilter(event=EventNameFilter(name=[ROLES_CHANGED]), resource=EventResourceFilter(id=["colony.roles"]))
    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            payloads = [event.payload for event in client.read_events(filter=wanted, limit=50).events]
            if {"before": first.role_distribution, "after": second.role_distribution} in payloads:
                return
            time.sleep(0.5)
    raise AssertionError(f"no {ROLES_CHANGED} event from {first.role_distribution} to {second.role_distribution}")


def test_the_pruning_report_is_an_artifact() -> None:
    kernel = kernel_for(KernelSettings())
    kernel.record_outcome(
        RecordOutcomeRequest(
            agent_id="a", action_type="read_module", target="pkg.old", actual_outcome="ok", tests_passed=True
        )
    )
    report = pruning_report()
    assert report.total_candidates == len(report.candidates)
    artifact = latest_artifact("colony-pruning-report")
    assert artifact.type == "table" and f"{report.total_candidates} pruning candidate" in (artifact.description or "")


@flow(name="claimed-and-lost")
def claimed_and_lost() -> None:
    """A flow whose run a worker claimed and whose process never started."""


def test_a_tick_crashes_the_colony_runs_claimed_longer_ago_than_the_start_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What the lost-start automation misses when Prefect's triggers hold a run's Pending event:
    # a run lost while pending, and one lost once Running but before its first beat.
    monkeypatch.setenv("COLONY_START_SECONDS", str(SHORTEST_WINDOW_SECONDS))
    with get_client(sync_client=True) as client:

        def claimed(tags: list[str], *, started: bool = False) -> FlowRun:
            run = client.create_flow_run(claimed_and_lost, name=f"claimed-{uuid4()}", tags=tags, state=Pending())
            client.set_flow_run_state(run.id, Submitting())  # what a worker proposes next
            if started:
                client.set_flow_run_state(run.id, Running())  # what the run's engine proposes
            return client.read_flow_run(run.id)

        lost = claimed(["colony"])
        lost_running = claimed(["colony"], started=True)
        beating = claimed(["colony"], started=True)
        elsewhere = claimed(["not-colony"])  # a run of someone else's deployment
        beat(client, beating.id)
        assert lost_running.state is not None and lost_running.state.timestamp is not None
        window_closed = lost_running.state.timestamp + timedelta(seconds=SHORTEST_WINDOW_SECONDS + 1)
        time.sleep(max(0.0, (window_closed - datetime.now(UTC)).total_seconds()))  # the claim's age is the point
        starting = claimed(["colony"])  # still inside its window
        colony_tick()
        runs = (lost, lost_running, beating, elsewhere, starting)
        states = {run.id: client.read_flow_run(run.id).state for run in runs}
    for run in (lost, lost_running):
        crashed = states[run.id]
        assert crashed is not None and crashed.name == "Crashed"
        assert crashed.message == lost_start_message(SHORTEST_WINDOW_SECONDS)
    assert [getattr(states[run.id], "name", None) for run in (beating, elsewhere, starting)] == [
        "Running",
        "Submitting",
        "Submitting",
    ]


def beat(client: SyncPrefectClient, run: UUID) -> None:
    """A Colony heartbeat of ``run``, once the events API shows it (a live run's first beat)."""
    resource = f"prefect.flow-run.{run}"
    emit_event(HEARTBEAT_EVENT, resource={"prefect.resource.id": resource})
    beats = EventFilter(event=EventNameFilter(name=[HEARTBEAT_EVENT]), resource=EventResourceFilter(id=[resource]))
    deadline = time.monotonic() + 30
    while not client.read_events(filter=beats, limit=1).events:
        assert time.monotonic() < deadline, f"the heartbeat of {run} never reached the events API"
        time.sleep(0.2)
