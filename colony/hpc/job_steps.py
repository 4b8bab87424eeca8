"""One HPC job as plain data, and the one order its steps run in.

Whoever runs a job (this process, or Prefect's ``hpc-job`` flow) runs
``run_cycle``: record the job, upload its inputs, start it, poll it, fetch its
outputs. Idempotent end to end: the job's name is derived from the call, the
service records the job before anything reaches Batch, and a rerun (after a
crash, a kill, a retry) picks the record up where it stands. A job that
already SUCCEEDED is a cache hit: its outputs are fetched and no Batch job is
started.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from colony.hpc.client import HPCClient, HPCClientConfig
from colony.hpc.cycle import Clock, InputArtifact, PollPolicy, Sleep, download_outputs, poll_until_done, upload_inputs
from colony.hpc.defaults import default_client, default_settings
from colony.hpc.models import JobCreated, JobRequest, JobState, JobStatus
from colony.spec import ResourceRequirements
from colony.telemetry import note_execution

__all__ = ["ClientSteps", "HPCJob", "JobSteps", "run_cycle"]

Logger = logging.Logger | logging.LoggerAdapter[Any]


class HPCJob(BaseModel):
    """Everything one run needs; plain data, so a Prefect flow (or its UI) can take it."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(description="Tool whose job definition runs the job.")
    name: str = Field(description="Deterministic job name (see colony.hpc.job_name).")
    artifacts: list[InputArtifact] = Field(default_factory=list, description="Input files on this machine.")
    parameters: dict[str, str] = Field(default_factory=dict, description="Batch job parameters.")
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements, description="What the run needs.")
    poll: PollPolicy = Field(default_factory=PollPolicy, description="How often to ask about the job.")
    output_dir: Path = Field(description="Where the outputs are downloaded to.")
    client: HPCClientConfig | None = Field(
        default=None, description="How to reach the HPC service; else the environment's (COLONY_HPC_*)."
    )

    def client_config(self) -> HPCClientConfig:
        """How to reach the service: given here, else from ``COLONY_HPC_*``."""
        return self.client if self.client is not None else default_client().config

    def timeout_seconds(self) -> float:
        """How long to wait for the job: a multiple of its expected wall-clock, else the operator's cap."""
        expected = self.resources.expected_wallclock_seconds
        if expected is None:
            return default_settings().limits.max_wallclock_seconds
        return expected * self.poll.timeout_factor

    def request(self) -> JobRequest:
        """What the service is asked to record."""
        return JobRequest(
            name=self.name,
            tool=self.tool,
            artifacts=[artifact.descriptor() for artifact in self.artifacts],
            parameters=self.parameters,
            resources=self.resources,
        )


class JobSteps(Protocol):
    """The five steps of a job; plain client calls here, Prefect tasks in ``flows.hpc_job``."""

    async def create(self, request: JobRequest) -> JobCreated:
        """Record the job with the service; an existing record comes back as it is."""
        ...

    async def upload(self, created: JobCreated, artifacts: list[InputArtifact]) -> list[str]:
        """Stream every input to its target; the keys uploaded."""
        ...

    async def start(self, name: str) -> JobStatus:
        """Hand the job to AWS Batch."""
        ...

    async def poll(self, name: str, timeout_seconds: float, policy: PollPolicy) -> JobStatus:
        """Wait for the job to end; FAILED raises."""
        ...

    async def fetch(self, name: str, output_dir: Path) -> dict[str, str]:
        """Download every output under ``output_dir``; local paths by key."""
        ...


async def run_cycle(job: HPCJob, steps: JobSteps, logger: Logger) -> dict[str, str]:
    """Run ``job`` to completion through ``steps``; its outputs' local paths by key."""
    created = await steps.create(job.request())
    record = created.record
    note_execution({"colony.hpc.job": record.name, "colony.hpc.batch_job_id": record.batch_job_id})
    if record.state is JobState.SUCCEEDED:
        logger.info("HPC job %s: cache hit, outputs of Batch job %s reused", record.name, record.batch_job_id)
    else:
        if not record.state.submitted:
            await steps.upload(created, job.artifacts)
        if record.batch_job_id is None:
            started = await steps.start(record.name)
            note_execution({"colony.hpc.batch_job_id": started.batch_job_id})
        else:
            logger.info("HPC job %s: resuming Batch job %s (%s)", record.name, record.batch_job_id, record.state.value)
        await steps.poll(record.name, job.timeout_seconds(), job.poll)
    return await steps.fetch(record.name, job.output_dir)


class ClientSteps:
    """The steps as direct calls on an ``HPCClient``, polling on an injected clock."""

    def __init__(
        self, client: HPCClient, *, logger: Logger, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep
    ) -> None:
        self.client, self.logger, self.clock, self.sleep = client, logger, clock, sleep

    async def create(self, request: JobRequest) -> JobCreated:
        return await self.client.create_job(request)

    async def upload(self, created: JobCreated, artifacts: list[InputArtifact]) -> list[str]:
        return await upload_inputs(self.client, created.record.name, created.uploads, artifacts)

    async def start(self, name: str) -> JobStatus:
        return await self.client.submit(name)

    async def poll(self, name: str, timeout_seconds: float, policy: PollPolicy) -> JobStatus:
        async def on_change(status: JobStatus, elapsed: float) -> None:
            self.logger.info("HPC job %s: %s after %.0f s %s", name, status.state.value, elapsed, status.status_reason)

        return await poll_until_done(
            self.client,
            name,
            timeout_seconds=timeout_seconds,
            policy=policy,
            clock=self.clock,
            sleep=self.sleep,
            on_change=on_change,
        )

    async def fetch(self, name: str, output_dir: Path) -> dict[str, str]:
        return await download_outputs(self.client, name, output_dir)
