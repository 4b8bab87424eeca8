"""colony_tick: advance the colony one tick and show its state in the Prefect UI.

After the kernel's tick (evaporation, expiry) the flow settles the held runs whose approval
was decided elsewhere or expired (``flows.holds.settle_held_runs``) and crashes the runs lost
while they started that Prefect's triggers missed (``flows._recovery``), then publishes the status as artifacts:
a table of the strongest signals, the budget usage, the role distribution and a short
summary. When the role distribution differs from the previous tick's (kept in a Prefect
Variable), it emits a ``colony.roles.changed`` event for automations.
"""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.variables import Variable

from blocks import load_settings
from colony.kernel import ColonyStatus, KernelSettings
from flows._events import emit_roles
from flows._heartbeat import beating
from flows._recovery import crash_lost_starts
from flows.holds import Settled, settle_held_runs
from tasks.kernel import kernel_for, tick

__all__ = ["ROLES_VARIABLE", "colony_tick", "crash_lost", "publish_status", "settle_holds"]

ROLES_VARIABLE = "colony_role_distribution"


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat(timespec="seconds")


@task(name="colony.publish-status", tags={"colony"}, cache_policy=NO_CACHE)
def publish_status(status: ColonyStatus) -> None:
    """Publish the status as artifacts, and an event if the roles changed."""
    signals = status.pheromone_summary.top_signals
    create_table_artifact(
        key="colony-signals",
        table=[
            {
                "location": signal.location,
                "signal": signal.signal_type.value,
                "strength": round(signal.strength, 3),
                "updated": _when(signal.updated_at),
            }
            for signal in signals
        ],
        description=f"Strongest pheromone signals after tick {status.tick_count}.",
    )
    create_table_artifact(
        key="colony-budget",
        table=[
            {
                "dimension": name,
                "used": round(usage.used, 3),
                "max": usage.max,
                "used %": round(100 * usage.used / usage.max, 1) if usage.max else 0.0,
            }
            for name, usage in status.budget_usage.items()
        ],
        description="Budget used in the current period.",
    )
    roles = dict(sorted(status.role_distribution.items()))
    create_table_artifact(
        key="colony-roles",
        table=[{"role": role, "agents": count} for role, count in roles.items()],
        description="Agents per role.",
    )
    create_markdown_artifact(
        key="colony-status",
        markdown=(
            f"# Colony after tick {status.tick_count}\n\n"
            f"- live signals: {status.pheromone_summary.total_signals}\n"
            f"- agents: {sum(roles.values())} ({', '.join(f'{r}: {n}' for r, n in roles.items()) or 'none'})\n"
            f"- recent outcomes: {len(status.recent_consequences)}\n"
            f"- pruning candidates: {status.pruning_candidates_count}\n"
        ),
        description="The colony at a glance.",
    )
    previous = Variable.get(ROLES_VARIABLE, default=None)
    if previous is not None and previous != roles:
        emit_roles(dict(previous), roles)
    if previous != roles:
        Variable.set(ROLES_VARIABLE, roles, overwrite=True)


@task(name="colony.settle-held-runs", tags={"colony"}, cache_policy=NO_CACHE)
def settle_holds(settings: KernelSettings) -> list[Settled]:
    """Resume the held runs whose approval was decided elsewhere; expire and end those nobody decided."""
    settled = settle_held_runs(kernel_for(settings))
    for entry in settled:
        if entry.action != "waiting":
            get_run_logger().info("approval %s: flow run %s %s", entry.approval_id, entry.flow_run_id, entry.action)
    return settled


@task(name="colony.crash-lost-starts", tags={"colony"}, cache_policy=NO_CACHE)
def crash_lost() -> list[UUID]:
    """Mark Crashed the Colony runs a worker claimed ``COLONY_START_SECONDS`` ago that never beat."""
    crashed = crash_lost_starts()
    for run in crashed:
        get_run_logger().warning("flow run %s was claimed and never beat: marked Crashed", run)
    return crashed


@flow(name="colony-tick")
@beating
def colony_tick() -> ColonyStatus:
    """Advance the colony one tick and publish its status.

    The tick is keyed by the flow run, so a retry of a crashed run does not tick twice.
    """
    context = FlowRunContext.get()
    key = f"flow-run:{context.flow_run.id}" if context and context.flow_run else None
    settings = load_settings().kernel
    status = tick(settings, key)
    settle_holds(settings)
    crash_lost()
    publish_status(status)
    return status
