"""The HPC service's records and messages, shared by the service, its client and the flow.

Job names are deterministic (derived from the call), so every record here is
keyed by ``name``: creating, uploading or submitting twice under one name
lands on the same record, the same S3 keys and the same Batch job.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from colony.hpc.parts import MAX_ARTIFACTS, MAX_JOB_BYTES, MAX_OBJECT_BYTES
from colony.spec import ResourceRequirements

__all__ = [
    "JOB_NAME_PATTERN",
    "ArtifactDescriptor",
    "CompletedPart",
    "JobCreated",
    "JobRecord",
    "JobRequest",
    "JobState",
    "JobStatus",
    "OutputArtifact",
    "UploadPart",
    "UploadTarget",
]

#: AWS Batch job names: letters, digits, hyphens and underscores, at most 128.
JOB_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"
#: An artifact key is a relative path under the job's prefix ('.' and '..' segments refused below).
ARTIFACT_KEY_PATTERN = r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$"


class WireModel(BaseModel):
    """Base of every message: strict about unknown keys."""

    model_config = ConfigDict(extra="forbid")


class JobState(StrEnum):
    """Where a job is: Colony's own states, then AWS Batch's."""

    CREATED = "CREATED"
    SUBMITTING = "SUBMITTING"
    SUBMITTED = "SUBMITTED"
    PENDING = "PENDING"
    RUNNABLE = "RUNNABLE"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"

    @property
    def terminal(self) -> bool:
        """Whether the job will not change state again."""
        return self in (JobState.SUCCEEDED, JobState.FAILED)

    @property
    def submitted(self) -> bool:
        """Whether Batch has (or may have) been asked to run the job."""
        return self is not JobState.CREATED


class ArtifactDescriptor(WireModel):
    """One input file the job reads, declared before it is uploaded."""

    key: str = Field(pattern=ARTIFACT_KEY_PATTERN, description="Relative path under the job's input prefix.")
    size_bytes: int = Field(
        ge=0, le=MAX_OBJECT_BYTES, description="Exact size of the file (at most S3's 5 TiB); plans the upload."
    )
    content_type: str = Field(default="application/octet-stream", description="MIME type stored with the object.")

    @field_validator("key")
    @classmethod
    def _inside_prefix(cls, key: str) -> str:
        if len(key) > 512 or any(part in (".", "..") for part in key.split("/")):
            raise ValueError("must be a relative path of at most 512 characters without '.' or '..' segments")
        return key


class JobRequest(WireModel):
    """What a caller asks the service to run."""

    name: str = Field(pattern=JOB_NAME_PATTERN, description="Deterministic job name; also the Batch job name.")
    tool: str = Field(min_length=1, description="Tool whose job definition runs the job.")
    artifacts: list[ArtifactDescriptor] = Field(
        default_factory=list,
        max_length=MAX_ARTIFACTS,
        description=f"Input files to upload: at most {MAX_ARTIFACTS}, distinct keys, 5 TiB together.",
    )
    parameters: dict[str, str] = Field(default_factory=dict, description="Batch job parameters (Ref:: values).")
    resources: ResourceRequirements = Field(
        default_factory=ResourceRequirements, description="What one run needs; checked against operator limits."
    )

    @field_validator("artifacts")
    @classmethod
    def _bounded(cls, artifacts: list[ArtifactDescriptor]) -> list[ArtifactDescriptor]:
        repeated = sorted(key for key, count in Counter(a.key for a in artifacts).items() if count > 1)
        if repeated:
            raise ValueError(f"keys must be distinct; repeated: {', '.join(repeated)}")
        total = sum(artifact.size_bytes for artifact in artifacts)
        if total > MAX_JOB_BYTES:
            raise ValueError(f"inputs total {total} bytes; one job may declare at most {MAX_JOB_BYTES} (5 TiB)")
        return artifacts


class UploadPart(WireModel):
    """One presigned part of a multipart upload."""

    part_number: int = Field(ge=1, description="1-based part number.")
    url: str = Field(description="Presigned PUT URL for this part.")


class UploadTarget(WireModel):
    """Where to PUT one input artifact: a single URL, or one URL per part."""

    key: str = Field(description="The artifact's key, as declared.")
    s3_key: str = Field(description="The full S3 object key the upload lands on.")
    url: str | None = Field(default=None, description="Presigned PUT URL for a single-request upload.")
    content_type: str | None = Field(
        default=None, description="Content-Type the single-request PUT must send: the URL's signature covers it."
    )
    upload_id: str | None = Field(default=None, description="Multipart upload id, when the artifact is large.")
    part_size: int | None = Field(default=None, description="Bytes per part (the last part may be shorter).")
    parts: list[UploadPart] = Field(default_factory=list, description="Presigned part URLs, in order.")
    expires_at: datetime = Field(description="When the presigned URLs stop working.")


class JobRecord(WireModel):
    """The service's record of a job, stored in S3 beside its artifacts."""

    name: str = Field(description="Deterministic job name.")
    owner: str = Field(description="Agent id of the principal that created the job; only it (or an operator) sees it.")
    tool: str = Field(description="Tool the job runs.")
    job_definition: str = Field(description="Batch job definition used.")
    state: JobState = Field(description="Last known state.")
    batch_job_id: str | None = Field(default=None, description="AWS Batch job id, once submitted.")
    status_reason: str = Field(default="", description="Batch's statusReason, if any.")
    artifacts: list[ArtifactDescriptor] = Field(default_factory=list, description="Declared inputs.")
    parameters: dict[str, str] = Field(default_factory=dict, description="Batch job parameters.")
    resources: ResourceRequirements = Field(description="Requested resources.")
    input_prefix: str = Field(description="s3://bucket/prefix/ the job reads inputs from.")
    output_prefix: str = Field(description="s3://bucket/prefix/ the job writes outputs to.")
    created_at: datetime = Field(description="When the record was created.")
    updated_at: datetime = Field(description="When the record last changed.")


class JobCreated(WireModel):
    """The answer to creating a job: its record and where to upload each input."""

    record: JobRecord = Field(description="The job's record (an existing one if the name was known).")
    uploads: list[UploadTarget] = Field(default_factory=list, description="Upload targets; empty once submitted.")


class CompletedPart(WireModel):
    """A part the caller uploaded, identified by the ETag S3 answered."""

    part_number: int = Field(ge=1, description="1-based part number.")
    etag: str = Field(min_length=1, description="ETag returned by the part's PUT.")


class JobStatus(WireModel):
    """The job's state as Batch reports it now."""

    name: str = Field(description="Job name.")
    state: JobState = Field(description="Current state.")
    batch_job_id: str | None = Field(default=None, description="Batch job id.")
    status_reason: str = Field(default="", description="Batch's statusReason.")
    log_tail: list[str] = Field(default_factory=list, description="Last log lines (failed jobs only).")

    @property
    def terminal(self) -> bool:
        """Whether the job is done, one way or the other."""
        return self.state.terminal


class OutputArtifact(WireModel):
    """One file the job wrote, with a presigned URL to download it."""

    key: str = Field(description="Relative path under the job's output prefix.")
    size_bytes: int = Field(description="Object size.")
    url: str = Field(description="Presigned GET URL.")


def error_body(error: Any) -> dict[str, Any]:
    """The JSON body every error response carries: ``{"error": {...}}``."""
    return {"error": error.to_dict()}
