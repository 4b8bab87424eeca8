"""What happens to a Colony run whose process died: Prefect marks it Crashed, then runs it again.

A run whose process died with its worker (or its machine) stays Running forever unless
something notices. Colony's flow runs beat every ``COLONY_HEARTBEAT_SECONDS``
(``flows._heartbeat``); the first automation here is Prefect's documented one ("Detect and
respond to zombie flows") that crashes a run after three missed beats. Three changes to the
documented definition: it listens to Colony's own beat, which always precedes the run's final
state (Prefect's may follow it, and the documented automation then fires on a finished run);
it judges only runs tagged ``colony``; and a paused or suspended run (a HOLD waiting for a
person, whose process has exited) is not a zombie.

A run that dies before its first beat (its worker claimed it, Pending, then the machine was
lost while the process started) never opens that window. The second automation gives every
claimed run ``start_seconds`` to beat, finish or pause, and crashes it otherwise. Prefect's
triggers can miss a claim made soon after the scheduler created the run; every tick crashes
such a run too (``flows._recovery``).

The third puts a crashed Colony run back in the queue (``AwaitingRetry``, as the UI's
retry does), so a worker still alive takes it without a person. That is safe for every
Colony flow: a tick is keyed by its flow run (it does not tick twice), the gate's verdict
is cached per flow run in Colony's shared result storage (a gated action is not proposed
again; the kernel signs its authorization again while the reservation is open), the record
settles the reservation once, and cached tool results are reused. It is bounded: a run that
crashed on its ``crash_retries``-th start stays Crashed, so a run that kills its own process
does not loop, and a run that crashed before it ever ran (its run count still 0) stays Crashed
for a person: nothing bounds how often a run that cannot start would be scheduled again.
"""

from __future__ import annotations

from datetime import timedelta

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.events.actions import ChangeFlowRunState
from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture
from prefect.events.schemas.events import ResourceSpecification

from flows._heartbeat import HEARTBEAT_EVENT
from flows._recovery import COLONY_TAG, RecoverySettings, lost_start_message

__all__ = [
    "RECOVERY_AUTOMATION",
    "START_AUTOMATION",
    "ZOMBIE_AUTOMATION",
    "ensure_automations",
    "recovery_automation",
    "start_automation",
    "zombie_automation",
]

ZOMBIE_AUTOMATION = "colony: crash zombie flow runs"
START_AUTOMATION = "colony: crash flow runs lost while starting"
RECOVERY_AUTOMATION = "colony: retry crashed flow runs"


def zombie_automation(settings: RecoverySettings | None = None) -> AutomationCore:
    """After each heartbeat of a flow run, expect another (or a final state) within ``zombie_seconds``."""
    settings = settings or RecoverySettings()
    return AutomationCore(
        name=ZOMBIE_AUTOMATION,
        description="Marks a flow run Crashed when its heartbeats stop (its process or machine died).",
        trigger=_alive_within(after=HEARTBEAT_EVENT, seconds=settings.zombie_seconds),
        actions=[
            ChangeFlowRunState(state=StateType.CRASHED, message="Flow run marked as crashed due to missing heartbeats.")
        ],
    )


def start_automation(settings: RecoverySettings | None = None) -> AutomationCore:
    """After a worker claims a flow run (Pending), expect its first beat (or an end) within ``start_seconds``."""
    settings = settings or RecoverySettings()
    return AutomationCore(
        name=START_AUTOMATION,
        description="Marks a flow run Crashed when it never beat after a worker claimed it (the worker died).",
        trigger=_alive_within(after="prefect.flow-run.Pending", seconds=settings.start_seconds),
        actions=[ChangeFlowRunState(state=StateType.CRASHED, message=lost_start_message(settings.start_seconds))],
    )


def _alive_within(after: str, seconds: int) -> EventTrigger:
    """A Colony run's ``after`` event, then a beat or a final or paused state within ``seconds``."""
    return EventTrigger(
        after={after},
        expect={
            HEARTBEAT_EVENT,
            "prefect.flow-run.Completed",
            "prefect.flow-run.Failed",
            "prefect.flow-run.Cancelled",
            "prefect.flow-run.Crashed",
            "prefect.flow-run.Paused",
            "prefect.flow-run.Suspended",
        },
        match=ResourceSpecification({"prefect.resource.id": ["prefect.flow-run.*"]}),
        match_related=_colony_runs(),
        for_each={"prefect.resource.id"},
        posture=Posture.Proactive,
        threshold=1,
        within=timedelta(seconds=seconds),
    )


def recovery_automation(settings: RecoverySettings | None = None) -> AutomationCore:
    """When a Colony run crashes on one of its first ``crash_retries`` starts, schedule it again."""
    settings = settings or RecoverySettings()
    starts = [str(count) for count in range(1, max(settings.crash_retries, 1) + 1)]
    return AutomationCore(
        name=RECOVERY_AUTOMATION,
        description=f"Schedules a crashed Colony flow run again, at most {settings.crash_retries} times.",
        enabled=settings.crash_retries > 0,
        trigger=EventTrigger(
            expect={"prefect.flow-run.Crashed"},
            match=ResourceSpecification({"prefect.resource.id": ["prefect.flow-run.*"], "prefect.run-count": starts}),
            match_related=_colony_runs(),
            for_each={"prefect.resource.id"},
            posture=Posture.Reactive,
            threshold=1,
            within=timedelta(0),
        ),
        actions=[
            ChangeFlowRunState(
                state=StateType.SCHEDULED,
                name="AwaitingRetry",
                message="Scheduled again after a crash (its verdict, tick and reservation carry over).",
            )
        ],
    )


def _colony_runs() -> ResourceSpecification:
    return ResourceSpecification({"prefect.resource.id": f"prefect.tag.{COLONY_TAG}", "prefect.resource.role": "tag"})


def ensure_automations(settings: RecoverySettings | None = None) -> dict[str, str]:
    """Create the three automations on the configured Prefect API, or bring existing ones up to date.

    Idempotent: however often it runs, one automation of each name remains. Returns what it
    did to each, by name.
    """
    settings = settings or RecoverySettings()
    done = {}
    with get_client(sync_client=True) as client:
        for wanted in (zombie_automation(settings), start_automation(settings), recovery_automation(settings)):
            existing = client.read_automations_by_name(wanted.name)
            if not existing:
                client.create_automation(wanted)
                done[wanted.name] = "created"
                continue
            keep, *duplicates = existing
            for duplicate in duplicates:
                client.delete_automation(duplicate.id)
            client.update_automation(keep.id, wanted)
            done[wanted.name] = "updated"
    return done
