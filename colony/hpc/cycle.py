"""The pieces of one HPC run that ``colony.hpc.job_steps.run_cycle`` strings together.

Deterministic job names, streamed uploads (renewing expired URLs once),
polling with capped exponential backoff against an injected clock (so tests
and benchmarks drive time instead of sleeping), and streamed downloads.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from colony.errors import HPCJobFailedError, HPCRequestError, HPCTimeoutError
from colony.hpc.client import CHUNK_BYTES, HPCClient
from colony.hpc.models import ArtifactDescriptor, JobState, JobStatus, UploadTarget
from colony.spec import ToolSpec

__all__ = [
    "Clock",
    "InputArtifact",
    "PollPolicy",
    "Sleep",
    "StatusSource",
    "download_outputs",
    "job_name",
    "poll_until_done",
    "upload_inputs",
]

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
OnChange = Callable[[JobStatus, float], Awaitable[None]]


class StatusSource(Protocol):
    """What polling needs of a client: a job's status by name (``HPCClient``, or a simulated job)."""

    async def status(self, name: str) -> JobStatus:
        """The job's current status."""
        ...


class InputArtifact(BaseModel):
    """One input file of a job, on local disk."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(description="Relative path the job reads it under.")
    path: Path = Field(description="Where the file is on this machine.")
    content_type: str = Field(default="application/octet-stream", description="MIME type.")

    def descriptor(self) -> ArtifactDescriptor:
        """What the service is told about the file before it is uploaded."""
        return ArtifactDescriptor(key=self.key, size_bytes=self.path.stat().st_size, content_type=self.content_type)

    def sha256(self) -> str:
        """Digest of the file's bytes, read a chunk at a time."""
        digest = hashlib.sha256()
        with self.path.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
        return digest.hexdigest()


class PollPolicy(BaseModel):
    """How often to ask about a running job: capped exponential backoff."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    initial_seconds: float = Field(default=5.0, gt=0, description="First pause after submitting.")
    factor: float = Field(default=2.0, ge=1, description="Each pause is this many times the last.")
    max_seconds: float = Field(default=300.0, gt=0, description="Longest pause between two polls.")
    timeout_factor: float = Field(default=2.0, ge=1, description="Timeout is this many times the expected wall-clock.")

    def pauses(self) -> Iterable[float]:
        """The pauses between polls, forever."""
        pause = self.initial_seconds
        while True:
            yield min(pause, self.max_seconds)
            pause *= self.factor


def job_name(spec: ToolSpec, arguments: Mapping[str, Any], artifacts: Iterable[InputArtifact]) -> str:
    """A Batch-valid job name derived from the call: same tool, arguments and input bytes, same name.

    A tool that is not deterministic gets a fresh name per call, so it is never served from cache.
    """
    digest = hashlib.sha256()
    digest.update(json.dumps([spec.name, spec.version, dict(arguments)], sort_keys=True, default=str).encode())
    for artifact in sorted(artifacts, key=lambda item: item.key):
        digest.update(f"\0{artifact.key}\0{artifact.sha256()}".encode())
    if not spec.deterministic:
        digest.update(uuid.uuid4().bytes)
    return f"{spec.name.replace('_', '-')}-{digest.hexdigest()[:40]}"


async def upload_inputs(
    client: HPCClient, name: str, targets: list[UploadTarget], artifacts: Iterable[InputArtifact]
) -> list[str]:
    """Stream every input to its target; renews the targets once if they expired. The keys uploaded."""
    by_key = {artifact.key: artifact for artifact in artifacts}
    missing = [target.key for target in targets if target.key not in by_key]
    if missing:
        raise HPCRequestError(f"job {name!r} declares inputs with no local file: {', '.join(missing)}")
    renewed = False
    pending = list(targets)
    while pending:
        target = pending[0]
        try:
            await client.upload(name, target, by_key[target.key].path)
        except HPCRequestError as error:
            if error.status_code != 403 or renewed:
                raise
            renewed = True
            fresh = {item.key: item for item in await client.renew_uploads(name)}
            pending = [fresh[item.key] for item in pending]
            continue
        pending.pop(0)
    return [target.key for target in targets]


async def poll_until_done(
    client: StatusSource,
    name: str,
    *,
    timeout_seconds: float,
    policy: PollPolicy | None = None,
    clock: Clock = time.monotonic,
    sleep: Sleep = asyncio.sleep,
    on_change: OnChange | None = None,
) -> JobStatus:
    """Poll until the job ends; SUCCEEDED returns, FAILED raises with reason and log tail.

    Raises:
        HPCJobFailedError: the job failed (its status reason and log tail attached).
        HPCTimeoutError: still not done after ``timeout_seconds``.
    """
    policy = policy or PollPolicy()
    started = clock()
    last_state: JobState | None = None
    pauses = iter(policy.pauses())
    while True:
        status = await client.status(name)
        elapsed = clock() - started
        if status.state != last_state:
            last_state = status.state
            if on_change is not None:
                await on_change(status, elapsed)
        if status.state is JobState.SUCCEEDED:
            return status
        if status.state is JobState.FAILED:
            raise HPCJobFailedError(name, status.status_reason, status.log_tail)
        remaining = timeout_seconds - elapsed
        if remaining <= 0:
            raise HPCTimeoutError(
                f"HPC job {name} still {status.state.value} after {elapsed:.0f} s (timeout {timeout_seconds:.0f} s)"
            )
        await sleep(min(next(pauses), remaining))


async def download_outputs(client: HPCClient, name: str, output_dir: Path) -> dict[str, str]:
    """Download every output of the SUCCEEDED job under ``output_dir``; local paths by key."""
    root = output_dir.resolve()
    fetched = {}
    for artifact in await client.outputs(name):
        destination = (root / artifact.key).resolve()
        if not destination.is_relative_to(root) or destination == root:
            raise HPCRequestError(f"job {name!r} wrote an output key outside its output directory: {artifact.key!r}")
        fetched[artifact.key] = str(await client.download(artifact, destination))
    return fetched
