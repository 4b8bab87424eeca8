"""A Colony run's heartbeat on a real Prefect server: it stops before the run suspends."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.events import emit_event
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
from prefect.events.worker import EventsWorker

from flows._heartbeat import HEARTBEAT_EVENT, beating, stop_beating
from tests.services.prefect import PrefectServer, prefect_api

DONE_EVENT = "colony.test.done-waiting"  # sent after the run's beatless wait, behind any late beat


@pytest.fixture
def api(prefect_server: PrefectServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[PrefectServer]:
    monkeypatch.setenv("COLONY_HEARTBEAT_SECONDS", "1")
    with prefect_api(prefect_server.api_url):
        yield prefect_server
        EventsWorker.drain_all(timeout=30, at_exit=False)  # this process's events go to this server only


@flow(name="stops-beating")
@beating
def stops_beating() -> tuple[str, float]:
    """Beats for a while, stops as a run about to suspend does, then goes on without beating."""
    from prefect.runtime import flow_run

    run = f"prefect.flow-run.{flow_run.id}"
    time.sleep(2.5)
    stop_beating()
    stopped = time.time()
    time.sleep(3)  # three beats' time: none may follow
    emit_event(DONE_EVENT, resource={"prefect.resource.id": run})
    return str(flow_run.id), stopped


def events_of(run_id: str, name: str) -> list[float]:
    """When each of the run's events named ``name`` occurred, as the events API has them."""
    named = EventFilter(
        event=EventNameFilter(name=[name]), resource=EventResourceFilter(id=[f"prefect.flow-run.{run_id}"])
    )
    with get_client(sync_client=True) as client:
        return [event.occurred.timestamp() for event in client.read_events(filter=named, limit=50).events]


def test_no_beat_follows_stop_beating(api: PrefectServer) -> None:
    run_id, stopped = stops_beating()
    deadline = time.monotonic() + 120
    while not events_of(run_id, DONE_EVENT):  # a loaded machine's event pipeline can take a while
        assert time.monotonic() < deadline, "the run's last event never reached the events API"
        time.sleep(0.5)
    beats = events_of(run_id, HEARTBEAT_EVENT)
    assert len(beats) >= 2, f"the run beat {len(beats)} times in 2.5 s of one-second beats"
    assert max(beats) <= stopped, f"a beat at {max(beats)} followed stop_beating at {stopped}"


def test_stop_beating_outside_a_run_leaves_the_events_worker_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def touched() -> EventsWorker:
        raise AssertionError("stop_beating reached for the events worker outside a beating run")

    monkeypatch.setattr(EventsWorker, "instance", touched)
    stop_beating()
