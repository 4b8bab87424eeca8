"""The ``hpc-job`` flow: submit, upload, start, poll and fetch one AWS Batch job.

Idempotent end to end: the job's name is derived from the call, the service
records the job before anything reaches Batch, and a rerun (after a crash, a
kill, a retry) picks the record up where it stands. A job that already
SUCCEEDED is a cache hit: its outputs are fetched and no Batch job is started.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from pydantic import BaseModel, ConfigDict, Field

from blocks.hpc import load_hpc_settings
from colony.hpc import HPCClientConfig, InputArtifact, JobRequest, JobState, PollPolicy
from colony.hpc.capability import default_client, default_settings
from colony.spec import ResourceRequirements
from tasks.hpc import fetch_outputs, poll_job, start_job, submit_job, upload_job_inputs

__all__ = ["HPCJobRequest", "hpc_job"]


class HPCJobRequest(BaseModel):
    """Everything one run needs; plain data, so the Prefect UI can start it."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(description="Tool whose job definition runs the job.")
    name: str = Field(description="Deterministic job name (see colony.hpc.job_name).")
    artifacts: list[InputArtifact] = Field(default_factory=list, description="Input files on this machine.")
    parameters: dict[str, str] = Field(default_factory=dict, description="Batch job parameters.")
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements, description="What the run needs.")
    poll: PollPolicy = Field(default_factory=PollPolicy, description="How often to ask about the job.")
    output_dir: Path = Field(description="Where the outputs are downloaded to.")
    client: HPCClientConfig | None = Field(
        default=None, description="How to reach the HPC service; else the block below, else the environment."
    )
    config_block: str | None = Field(default=None, description="Name of an HPCConfig block to read the service from.")

    def client_config(self) -> HPCClientConfig:
        """How to reach the service: given here, from the named block, or from ``COLONY_HPC_*``."""
        if self.client is not None:
            return self.client
        if self.config_block is None:
            return default_client().config
        settings = load_hpc_settings(self.config_block)
        return HPCClientConfig(
            endpoint=settings.endpoint, token=settings.token, timeout_seconds=settings.request_timeout_seconds
        )

    def timeout_seconds(self) -> float:
        """How long to wait for the job: a multiple of its expected wall-clock, else the operator's cap."""
        expected = self.resources.expected_wallclock_seconds
        if expected is None:
            return default_settings().limits.max_wallclock_seconds
        return expected * self.poll.timeout_factor


@flow(name="hpc-job", log_prints=False)
async def hpc_job(request: HPCJobRequest) -> dict[str, str]:
    """Run one HPC job to completion and download its outputs; local paths by output key."""
    logger = get_run_logger()
    client = request.client_config()
    job = JobRequest(
        name=request.name,
        tool=request.tool,
        artifacts=[artifact.descriptor() for artifact in request.artifacts],
        parameters=request.parameters,
        resources=request.resources,
    )
    created = await submit_job(client, job)
    record = created.record
    if record.state is JobState.SUCCEEDED:
        logger.info("HPC job %s: cache hit, outputs of Batch job %s reused", record.name, record.batch_job_id)
    else:
        if not record.state.submitted:
            await upload_job_inputs(client, created, request.artifacts)
        if record.batch_job_id is None:
            await start_job(client, record.name)
        else:
            logger.info("HPC job %s: resuming Batch job %s (%s)", record.name, record.batch_job_id, record.state.value)
        await poll_job(client, record.name, request.timeout_seconds(), request.poll)
    return await fetch_outputs(client, record.name, request.output_dir)
