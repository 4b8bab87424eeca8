"""What the HPC service does, apart from HTTP: the job lifecycle on top of ``BatchBackend``.

Submitting is idempotent. AWS Batch's SubmitJob takes no idempotency token, so
the record's state is moved to SUBMITTING *before* SubmitJob, and whenever a
record has no Batch job id the queue is searched for a job of the same name
first: a retry after an uncertain failure adopts the job it finds.

Every job is addressed by its owner and its name: one owner never reaches
another's records (the HTTP layer decides whose jobs a caller may address).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from colony.errors import HPCLimitError, HPCRequestError
from colony.hpc.models import JobCreated, JobRecord, JobRequest, JobState, JobStatus, OutputArtifact, UploadTarget
from colony.hpc.service.backend import BatchBackend

__all__ = ["JobService"]


class JobService:
    """Create, upload, submit, watch, fetch and cancel jobs, one record per owner and job name."""

    def __init__(self, backend: BatchBackend) -> None:
        self.backend = backend
        self.settings = backend.settings

    def _check_limits(self, request: JobRequest | JobRecord) -> None:
        violations = self.settings.limits.violations(request.resources)
        if violations:
            raise HPCLimitError(violations)

    def _job_definition(self, tool: str) -> str:
        definition = self.settings.job_definitions.get(tool)
        if definition is None:
            known = ", ".join(sorted(self.settings.job_definitions)) or "none"
            raise HPCRequestError(
                f"unknown tool {tool!r}: no job definition configured (tools: {known})", status_code=404
            )
        return definition

    def _require(self, owner: str, name: str) -> JobRecord:
        record = self._find(owner, name)
        if record is None:
            raise HPCRequestError(f"no HPC job named {name!r}", status_code=404)
        return record

    def _find(self, owner: str, name: str) -> JobRecord | None:
        record = self.backend.load_record(owner, name)
        return record if record is not None and record.owner == owner else None

    def create(self, owner: str, request: JobRequest) -> JobCreated:
        """``owner``'s job record (created if new) and, until it is submitted, where to upload its inputs."""
        existing = self._find(owner, request.name)
        if existing is not None:
            if existing.tool != request.tool or existing.artifacts != request.artifacts:
                raise HPCRequestError(
                    f"job {request.name!r} exists with other inputs (tool {existing.tool!r})", status_code=409
                )
            uploads = [] if existing.state.submitted else self.backend.upload_targets(existing)
            return JobCreated(record=existing, uploads=uploads)
        self._check_limits(request)
        definition = self._job_definition(request.tool)
        if not self.backend.job_definition_exists(definition):
            raise HPCRequestError(
                f"job definition {definition!r} for tool {request.tool!r} does not exist in AWS Batch",
                status_code=422,
            )
        now = datetime.now(UTC)
        prefix = self.backend.prefix(owner, request.name)
        record = self.backend.save_record(
            JobRecord(
                name=request.name,
                owner=owner,
                tool=request.tool,
                job_definition=definition,
                state=JobState.CREATED,
                artifacts=request.artifacts,
                parameters=request.parameters,
                resources=request.resources,
                input_prefix=self.backend.s3_uri(f"{prefix}inputs/"),
                output_prefix=self.backend.s3_uri(f"{prefix}outputs/"),
                created_at=now,
                updated_at=now,
            )
        )
        return JobCreated(record=record, uploads=self.backend.upload_targets(record))

    def uploads(self, owner: str, name: str) -> list[UploadTarget]:
        """Fresh upload targets (after the earlier ones expired)."""
        record = self._require(owner, name)
        if record.state.submitted:
            raise HPCRequestError(f"job {name!r} is already submitted; its inputs are fixed", status_code=409)
        return self.backend.upload_targets(record)

    def complete_upload(self, owner: str, name: str, key: str, upload_id: str, parts: list[tuple[int, str]]) -> None:
        """Finish one multipart upload of a declared input."""
        record = self._require(owner, name)
        if key not in {artifact.key for artifact in record.artifacts}:
            raise HPCRequestError(f"job {name!r} declares no input {key!r}", status_code=404)
        self.backend.complete_upload(record, key, upload_id, parts)

    def submit(self, owner: str, name: str) -> JobStatus:
        """Run the job on Batch, exactly once however often this is called."""
        record = self._require(owner, name)
        if record.batch_job_id is None and record.state is JobState.FAILED:
            raise HPCRequestError(f"job {name!r} was cancelled before it was submitted", status_code=409)
        if record.batch_job_id is None:
            self._check_limits(record)
            missing = self.backend.missing_artifacts(record)
            if missing:
                raise HPCRequestError(
                    f"job {name!r} is missing input artifact(s): {', '.join(missing)}", status_code=409
                )
            job_id = self.backend.find_batch_job(owner, name)
            if job_id is None:
                record = self.backend.save_record(record.model_copy(update={"state": JobState.SUBMITTING}))
                wallclock = record.resources.expected_wallclock_seconds or self.settings.limits.max_wallclock_seconds
                attempt = math.ceil(min(2 * wallclock, self.settings.limits.max_wallclock_seconds))
                job_id = self.backend.submit(record, attempt)
            record = self.backend.save_record(
                record.model_copy(update={"state": JobState.SUBMITTED, "batch_job_id": job_id})
            )
        return self.status(owner, name, record)

    def status(self, owner: str, name: str, record: JobRecord | None = None) -> JobStatus:
        """The job's state now; a failed job's log tail."""
        record = record or self._require(owner, name)
        stream = None
        if record.batch_job_id is not None and not record.state.terminal:
            state, reason, stream = self.backend.describe(record.batch_job_id)
            if (state, reason) != (record.state, record.status_reason):
                record = self.backend.save_record(record.model_copy(update={"state": state, "status_reason": reason}))
        elif record.batch_job_id is not None and record.state is JobState.FAILED:
            _, _, stream = self.backend.describe(record.batch_job_id)
        tail = self.backend.log_tail(stream) if record.state is JobState.FAILED else []
        return JobStatus(
            name=record.name,
            state=record.state,
            batch_job_id=record.batch_job_id,
            status_reason=record.status_reason,
            log_tail=tail,
        )

    def outputs(self, owner: str, name: str) -> list[OutputArtifact]:
        """The job's outputs with download URLs; only once it SUCCEEDED."""
        record = self._require(owner, name)
        status = self.status(owner, name, record)
        if status.state is not JobState.SUCCEEDED:
            raise HPCRequestError(f"job {name!r} is {status.state.value}, not SUCCEEDED: no outputs", status_code=409)
        return self.backend.outputs(record)

    def cancel(self, owner: str, name: str, reason: str = "cancelled by request") -> JobStatus:
        """Stop the job; a job not yet submitted simply never will be."""
        record = self._require(owner, name)
        if record.batch_job_id is not None and not record.state.terminal:
            self.backend.terminate(record.batch_job_id, reason)
        elif record.batch_job_id is None:
            record = self.backend.save_record(
                record.model_copy(update={"state": JobState.FAILED, "status_reason": reason})
            )
        return self.status(owner, name, None if record.batch_job_id else record)
