"""The HPC job's steps as Prefect tasks: submit, upload, start, poll, fetch.

Each wraps one piece of ``colony.hpc.cycle`` or ``HPCClient``; ``flows.hpc_job``
runs them in ``colony.hpc.job_steps.run_cycle``'s order. Retries are only
for errors that say so (``retryable``: the service was unreachable, AWS was
throttling); a refusal such as a limit or a missing artifact is never retried.
The service's job record is the cache, so Prefect's own caching is off.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import acreate_progress_artifact, aupdate_progress_artifact
from prefect.cache_policies import NO_CACHE

from colony.errors import ColonyError
from colony.hpc import HPCClient, HPCClientConfig, InputArtifact, JobCreated, JobRequest, JobStatus, PollPolicy
from colony.hpc.cycle import download_outputs, poll_until_done, upload_inputs

__all__ = ["fetch_outputs", "poll_job", "progress_key", "start_job", "submit_job", "upload_job_inputs"]


def only_retryable(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect retry condition: retry a Colony error marked retryable, nothing else.

    Prefect hands the failure over as ``Failed(data=<exception>)``.
    """
    error = getattr(state, "data", None)
    return isinstance(error, ColonyError) and error.retryable


def progress_key(name: str) -> str:
    """The job's progress artifact key (Prefect allows lowercase letters, digits and dashes)."""
    return "hpc-" + re.sub(r"[^a-z0-9-]", "-", name.lower())[-60:]


def hpc_step(name: str) -> Any:
    """The task decorator every HPC step shares: retried only when retryable, never cached by Prefect."""
    return task(name=name, retries=2, retry_delay_seconds=1, retry_condition_fn=only_retryable, cache_policy=NO_CACHE)


@hpc_step("hpc-submit")
async def submit_job(client: HPCClientConfig, request: JobRequest) -> JobCreated:
    """Record the job with the service (its intent); an existing record comes back as it is."""
    created = await HPCClient(client).create_job(request)
    get_run_logger().info("HPC job %s: record %s", request.name, created.record.state.value)
    return created


@hpc_step("hpc-upload")
async def upload_job_inputs(client: HPCClientConfig, created: JobCreated, artifacts: list[InputArtifact]) -> list[str]:
    """Stream every input from disk to its deterministic S3 key."""
    keys = await upload_inputs(HPCClient(client), created.record.name, created.uploads, artifacts)
    get_run_logger().info("HPC job %s: uploaded %s", created.record.name, ", ".join(keys) or "nothing")
    return keys


@hpc_step("hpc-start")
async def start_job(client: HPCClientConfig, name: str) -> JobStatus:
    """Hand the job to AWS Batch; the service never submits one name twice."""
    status = await HPCClient(client).submit(name)
    get_run_logger().info("HPC job %s: Batch job %s, %s", name, status.batch_job_id, status.state.value)
    return status


@hpc_step("hpc-poll")
async def poll_job(client: HPCClientConfig, name: str, timeout_seconds: float, policy: PollPolicy) -> JobStatus:
    """Wait for the job to end, logging each state change and updating a progress artifact."""
    logger = get_run_logger()
    progress = await acreate_progress_artifact(progress=0.0, key=progress_key(name), description=f"HPC job {name}")

    async def on_change(status: JobStatus, elapsed: float) -> None:
        logger.info("HPC job %s: %s after %.0f s %s", name, status.state.value, elapsed, status.status_reason)
        done = 100.0 if status.terminal else min(99.0, 100.0 * elapsed / timeout_seconds)
        await aupdate_progress_artifact(progress, done, description=f"HPC job {name}: {status.state.value}")

    return await poll_until_done(
        HPCClient(client), name, timeout_seconds=timeout_seconds, policy=policy, on_change=on_change
    )


@hpc_step("hpc-fetch")
async def fetch_outputs(client: HPCClientConfig, name: str, output_dir: Path) -> dict[str, str]:
    """Download every output of the SUCCEEDED job under ``output_dir``; local paths by key."""
    fetched = await download_outputs(HPCClient(client), name, output_dir)
    get_run_logger().info("HPC job %s: fetched %d output(s)", name, len(fetched))
    return fetched
