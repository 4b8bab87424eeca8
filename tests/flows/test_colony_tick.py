"""colony_tick and pruning_report: the kernel's upkeep, shown as Prefect artifacts and events."""

from __future__ import annotations

import time

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.client.schemas.objects import Artifact
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
from prefect.variables import Variable

from colony.kernel import KernelSettings, RecordOutcomeRequest, SignalType
from flows._events import ROLES_CHANGED
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
