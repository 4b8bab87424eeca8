"""Every Colony deployment, for ``colony up`` to serve (prefect.yaml declares the same five).

The tick runs on an interval (every minute by default), the pruning report daily; the
gated action, the tool call and the HPC job run when triggered from the UI, the API or agent code.
Every flow run gets ``FLOW_RUN_ENV``: heartbeats, so a run whose process died is marked Crashed
(``colony.cli.zombies``), and a console handler that survives the death of its worker's pipes.
"""

from __future__ import annotations

from datetime import timedelta

from prefect.deployments.runner import RunnerDeployment

from flows.colony_tick import colony_tick
from flows.gated_action import gated_action
from flows.hpc_job import hpc_job
from flows.pruning_report import pruning_report
from flows.tool_call import tool_call

__all__ = ["DAILY_PRUNING_CRON", "FLOW_RUN_ENV", "HEARTBEAT_SECONDS", "TICK_INTERVAL_SECONDS", "deployments"]

TICK_INTERVAL_SECONDS = 60
DAILY_PRUNING_CRON = "0 3 * * *"
HEARTBEAT_SECONDS = 30  # Prefect's minimum; a run is a zombie after three missed beats
FLOW_RUN_ENV = {
    "PREFECT_FLOWS_HEARTBEAT_FREQUENCY": str(HEARTBEAT_SECONDS),
    "PREFECT_LOGGING_HANDLERS_CONSOLE_CLASS": "flows._console.DetachableConsoleHandler",
}


def deployments(
    tick_interval_seconds: float = TICK_INTERVAL_SECONDS, pruning_cron: str = DAILY_PRUNING_CRON
) -> list[RunnerDeployment]:
    """The five deployments, named as in prefect.yaml."""
    tags = ["colony"]
    return [
        colony_tick.to_deployment(
            name="colony-tick",
            interval=timedelta(seconds=tick_interval_seconds),
            tags=tags,
            description="Advance the colony one tick (evaporation, expiry) and publish its status.",
        ),
        pruning_report.to_deployment(
            name="pruning-report",
            cron=pruning_cron,
            tags=tags,
            description="The pruning daemon's advisory report, as an artifact.",
        ),
        gated_action.to_deployment(
            name="gated-action",
            tags=tags,
            description="Run one tool action through the gate; a held action waits for approval here.",
        ),
        tool_call.to_deployment(
            name="tool-call",
            tags=tags,
            description="Run one catalog tool by name with JSON arguments.",
        ),
        hpc_job.to_deployment(
            name="hpc-job",
            tags=tags,
            description="Submit, upload, poll and fetch one HPC tool run on AWS Batch.",
        ),
    ]
