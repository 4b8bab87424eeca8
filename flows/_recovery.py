"""When a Colony run counts as lost, and the tick's backstop for runs lost while they started.

``colony.cli.zombies`` turns these settings into Prefect automations. One case escapes them:
Prefect's triggers hold a state-change event until they have seen the event it follows,
for up to 15 minutes, and the scheduler inserts its runs' Scheduled states without
emitting events. The Pending event of a scheduled run a worker claims within five minutes
of its scheduling (the first ticks after a deploy) is held, then judged after its window
was swept away: the lost-start automation never sees it, and a run whose worker died
while it started would stay Pending (or Running, if it died between its Running state and
its first beat) for good. Every tick therefore crashes the Colony runs still pending
``start_seconds`` after their claim, and those running that long without a beat
(``crash_lost_starts``), as the automation would have.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType, FlowRunFilterTags
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.client.schemas.responses import OrchestrationResult, SetStateStatus
from prefect.client.schemas.sorting import FlowRunSort
from prefect.events.filters import EventFilter, EventNameFilter, EventOccurredFilter, EventResourceFilter
from prefect.exceptions import ObjectNotFound
from prefect.states import Crashed
from pydantic import Field, model_validator

from flows._heartbeat import HEARTBEAT_EVENT, HeartbeatSettings

__all__ = [
    "COLONY_TAG",
    "MISSED_HEARTBEATS",
    "SHORTEST_WINDOW_SECONDS",
    "START_SECONDS",
    "RecoverySettings",
    "crash_lost_starts",
    "lost_start_message",
]

MISSED_HEARTBEATS = 3
START_SECONDS = 300  # a claimed run's process has this long to beat: room for an image pull or a loaded machine
SHORTEST_WINDOW_SECONDS = 10  # Prefect refuses a proactive trigger's window shorter than this
COLONY_TAG = "colony"  # every Colony deployment's tag (prefect.yaml, flows.deployments)
_SWEPT_PER_TICK = 200  # the oldest first; a larger backlog is taken by the next ticks


class RecoverySettings(HeartbeatSettings):
    """When a run counts as dead, and how often a crashed run is started again (``COLONY_*``)."""

    zombie_seconds: int = Field(
        default_factory=lambda fields: max(SHORTEST_WINDOW_SECONDS, MISSED_HEARTBEATS * fields["heartbeat_seconds"]),
        description="Seconds without a heartbeat after which a run is marked Crashed (more than one beat, at least "
        f"{SHORTEST_WINDOW_SECONDS}; default {MISSED_HEARTBEATS} beats).",
    )
    start_seconds: int = Field(
        default=START_SECONDS,
        ge=SHORTEST_WINDOW_SECONDS,
        le=86_400,
        description="Seconds a flow run a worker has claimed (Pending) may take to send its first heartbeat "
        "before it is marked Crashed (its worker died while it started).",
    )
    crash_retries: int = Field(
        default=3, ge=0, le=20, description="How many starts of a run may crash and still be scheduled again."
    )

    @model_validator(mode="after")
    def _longer_than_a_beat(self) -> RecoverySettings:
        if self.zombie_seconds < SHORTEST_WINDOW_SECONDS:
            raise ValueError(
                f"zombie_seconds ({self.zombie_seconds} s) must be at least {SHORTEST_WINDOW_SECONDS} s: "
                "Prefect evaluates no shorter proactive window"
            )
        if self.zombie_seconds <= self.heartbeat_seconds:
            raise ValueError(
                f"zombie_seconds ({self.zombie_seconds} s) must be more than one heartbeat "
                f"(heartbeat_seconds, {self.heartbeat_seconds} s): a live run would be judged dead"
            )
        return self


def lost_start_message(start_seconds: int) -> str:
    """The message of a run crashed because it never beat after its claim (the automation's and the tick's)."""
    return f"Flow run marked as crashed: no heartbeat within {start_seconds} s of being claimed."


def crash_lost_starts(settings: RecoverySettings | None = None) -> list[UUID]:
    """Mark Crashed every Colony run that was claimed ``start_seconds`` ago and never beat; the runs it crashed.

    A run's pending states (Pending, then the worker's Submitting) are its claim; a run that
    began, beat, paused or ended has left them. A run Running that long without one beat since
    its Running state died before its first (a live run beats as its body starts, a run that
    beat and stopped is the zombie automation's). Crashed is proposed like the automation's
    action, so a run that moves on at that moment is judged by Prefect's rules as there; a
    run deleted meanwhile, or whose proposal Prefect turned down, is not counted.
    """
    settings = settings or RecoverySettings()
    claimed_before = datetime.now(UTC) - timedelta(seconds=settings.start_seconds)
    crashed = []
    with get_client(sync_client=True) as client:
        pending = _colony_runs(client, StateType.PENDING, claimed_before)
        running = _colony_runs(client, StateType.RUNNING, claimed_before)
        for run in [*pending, *(run for run in running if not _beat_since(client, run))]:
            try:
                answer: OrchestrationResult[Any] = client.set_flow_run_state(
                    run.id, Crashed(message=lost_start_message(settings.start_seconds))
                )
            except ObjectNotFound:
                continue
            if answer.status is SetStateStatus.ACCEPT:
                crashed.append(run.id)
    return crashed


def _colony_runs(client: SyncPrefectClient, state: StateType, entered_before: datetime) -> list[FlowRun]:
    """The Colony runs in ``state`` since before ``entered_before``, the oldest first (a bounded sweep)."""
    in_state = FlowRunFilter(
        state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[state])),
        tags=FlowRunFilterTags(all_=[COLONY_TAG]),
    )
    sort = FlowRunSort.EXPECTED_START_TIME_ASC
    runs = client.read_flow_runs(flow_run_filter=in_state, sort=sort, limit=_SWEPT_PER_TICK)
    return [
        run
        for run in runs
        if run.state is not None and run.state.timestamp is not None and run.state.timestamp < entered_before
    ]


def _beat_since(client: SyncPrefectClient, run: FlowRun) -> bool:
    """Whether ``run`` sent a heartbeat since it entered its current state."""
    assert run.state is not None and run.state.timestamp is not None
    beats = EventFilter(
        event=EventNameFilter(name=[HEARTBEAT_EVENT]),
        resource=EventResourceFilter(id=[f"prefect.flow-run.{run.id}"]),
        occurred=EventOccurredFilter(since=run.state.timestamp, until=datetime.now(UTC)),
    )
    return bool(client.read_events(filter=beats, limit=1).events)
