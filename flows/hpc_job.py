"""The ``hpc-job`` flow: submit, upload, start, poll and fetch one AWS Batch job.

The flow runs ``colony.hpc.job_steps.run_cycle`` (the one order of the steps, and
its idempotence) with each step as a Prefect task (``tasks.hpc``): retried
when retryable, logged, with a progress artifact. ``PrefectJobRunner`` makes it
an HPC tool's ``JobRunner`` (``flows.job_runner``, re-exported here);
``use_prefect_job_runner()`` installs it as the process's default, which importing ``flows`` does.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from pydantic import Field

from blocks import load_settings
from colony.hpc import (
    HPCClientConfig,
    HPCJob,
    InputArtifact,
    JobCreated,
    JobRequest,
    JobStatus,
    PollPolicy,
)
from colony.hpc.job_steps import run_cycle
from flows._heartbeat import beating
from flows.job_runner import PrefectJobRunner, use_prefect_job_runner
from tasks.hpc import fetch_outputs, poll_job, start_job, submit_job, upload_job_inputs

__all__ = ["HPCJobRequest", "PrefectJobRunner", "hpc_job", "use_prefect_job_runner"]


class HPCJobRequest(HPCJob):
    """One job, as the flow takes it: plain data, so the Prefect UI can start it, naming a block if it likes."""

    config_block: str | None = Field(
        default=None,
        description="Name of a ColonyConfig block whose HPC settings reach the service; default: the settings "
        "every flow loads (the settings block, else COLONY_HPC_*).",
    )

    def client_config(self) -> HPCClientConfig:
        """How to reach the service: given here, else the HPC settings of the named or the configured block."""
        if self.client is not None:
            return self.client
        settings = load_settings(self.config_block).hpc
        return HPCClientConfig(
            endpoint=settings.endpoint, token=settings.token, timeout_seconds=settings.request_timeout_seconds
        )


class TaskSteps:
    """The job's steps as the Prefect tasks of ``tasks.hpc``."""

    def __init__(self, client: HPCClientConfig) -> None:
        self.client = client

    async def create(self, request: JobRequest) -> JobCreated:
        return await submit_job(self.client, request)

    async def upload(self, created: JobCreated, artifacts: list[InputArtifact]) -> list[str]:
        return await upload_job_inputs(self.client, created, artifacts)

    async def start(self, name: str) -> JobStatus:
        return await start_job(self.client, name)

    async def poll(self, name: str, timeout_seconds: float, policy: PollPolicy) -> JobStatus:
        return await poll_job(self.client, name, timeout_seconds, policy)

    async def fetch(self, name: str, output_dir: Path) -> dict[str, str]:
        return await fetch_outputs(self.client, name, output_dir)


@flow(name="hpc-job", log_prints=False)
@beating
async def hpc_job(request: HPCJobRequest) -> dict[str, str]:
    """Run one HPC job to completion and download its outputs; local paths by output key."""
    return await run_cycle(request, TaskSteps(request.client_config()), get_run_logger())
