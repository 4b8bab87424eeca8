"""Prefect's zombie-run automation: a flow run whose heartbeats stop is marked Crashed.

A run whose process died with its worker (or its machine) stays Running forever unless
something notices. Colony's flow runs beat every ``HEARTBEAT_SECONDS``
(``flows.deployments.FLOW_RUN_ENV``); this is Prefect's documented automation ("Detect and
respond to zombie flows") that crashes a run after three missed beats, so its retries and
the runs waiting on it move on without a person. Two changes to the documented definition:
it judges only runs tagged ``colony`` (every flow run beats, by default every 180 s, so a
foreign run would look dead after 90 s), and a paused or suspended run (a HOLD waiting for
a person, whose process has exited) is not a zombie.
"""

from __future__ import annotations

import importlib
from datetime import timedelta

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.events.actions import ChangeFlowRunState
from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture
from prefect.events.schemas.events import ResourceSpecification

__all__ = ["ZOMBIE_AUTOMATION", "ensure_zombie_automation", "zombie_automation"]

ZOMBIE_AUTOMATION = "colony: crash zombie flow runs"
MISSED_HEARTBEATS = 3
COLONY_TAG = "colony"  # every Colony deployment's tag (prefect.yaml, flows.deployments)


def zombie_automation() -> AutomationCore:
    """After each heartbeat of a flow run, expect another (or a final state) within three beats."""
    heartbeat_seconds: int = importlib.import_module("flows.deployments").HEARTBEAT_SECONDS
    return AutomationCore(
        name=ZOMBIE_AUTOMATION,
        description="Marks a flow run Crashed when its heartbeats stop (its process or machine died).",
        trigger=EventTrigger(
            after={"prefect.flow-run.heartbeat"},
            expect={
                "prefect.flow-run.heartbeat",
                "prefect.flow-run.Completed",
                "prefect.flow-run.Failed",
                "prefect.flow-run.Cancelled",
                "prefect.flow-run.Crashed",
                "prefect.flow-run.Paused",
                "prefect.flow-run.Suspended",
            },
            match=ResourceSpecification({"prefect.resource.id": ["prefect.flow-run.*"]}),
            match_related=ResourceSpecification(
                {"prefect.resource.id": f"prefect.tag.{COLONY_TAG}", "prefect.resource.role": "tag"}
            ),
            for_each={"prefect.resource.id"},
            posture=Posture.Proactive,
            threshold=1,
            within=timedelta(seconds=MISSED_HEARTBEATS * heartbeat_seconds),
        ),
        actions=[
            ChangeFlowRunState(state=StateType.CRASHED, message="Flow run marked as crashed due to missing heartbeats.")
        ],
    )


def ensure_zombie_automation() -> str:
    """Create the automation on the configured Prefect API, or bring an existing one up to date.

    Idempotent: however often it runs, one automation of that name remains. Returns what it did.
    """
    wanted = zombie_automation()
    with get_client(sync_client=True) as client:
        existing = client.read_automations_by_name(ZOMBIE_AUTOMATION)
        if not existing:
            client.create_automation(wanted)
            return "created"
        keep, *duplicates = existing
        for duplicate in duplicates:
            client.delete_automation(duplicate.id)
        client.update_automation(keep.id, wanted)
        return "updated"
