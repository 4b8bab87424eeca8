"""The AWS side of the HPC service: S3 for records and artifacts, Batch for jobs.

Every boto3 call runs inside ``aws_errors(...)``, so callers see ``AWSError``
with AWS's code, never a botocore exception. Job records live in S3 beside the
job's artifacts, under the job's owner (``jobs/<owner>/<name>/record.json``), so
a restarted service knows every job it ever created and two principals' jobs of
the same name never meet.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from colony.errors import HPCRequestError
from colony.hpc.models import JobRecord, JobState, OutputArtifact, UploadPart, UploadTarget
from colony.hpc.parts import part_size_for
from colony.hpc.service.auth import owner_key
from colony.hpc.service.aws_errors import aws_errors
from colony.hpc.settings import HPCSettings

__all__ = ["JOB_NAME_TAG", "JOB_OWNER_TAG", "BatchBackend"]

#: Tags every submitted Batch job carries, so it can be found by its Colony name and owner.
JOB_NAME_TAG = "colony:job-name"
JOB_OWNER_TAG = "colony:job-owner"
_LOG_GROUP = "/aws/batch/job"


class BatchBackend:
    """boto3 clients for one bucket and one job queue, with errors translated."""

    def __init__(self, settings: HPCSettings) -> None:
        self.settings = settings
        options: dict[str, Any] = {"region_name": settings.region, "endpoint_url": settings.aws_endpoint_url}
        self.s3 = boto3.client("s3", config=Config(signature_version="s3v4"), **options)
        self.batch = boto3.client("batch", **options)
        self.logs = boto3.client("logs", **options)

    def close(self) -> None:
        """Close the boto3 clients' connection pools."""
        for client in (self.s3, self.batch, self.logs):
            client.close()

    # -- records -------------------------------------------------------------------------

    def prefix(self, owner: str, name: str) -> str:
        """The S3 prefix everything of ``owner``'s job ``name`` lives under."""
        return f"jobs/{owner_key(owner)}/{name}/"

    def s3_uri(self, key: str) -> str:
        """``s3://bucket/key`` for a key in the configured bucket."""
        return f"s3://{self.settings.bucket}/{key}"

    def load_record(self, owner: str, name: str) -> JobRecord | None:
        """The stored record of ``owner``'s job ``name``, or None if there is none."""
        with aws_errors("GetObject"):
            try:
                key = f"{self.prefix(owner, name)}record.json"
                body = self.s3.get_object(Bucket=self.settings.bucket, Key=key)["Body"]
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                    return None
                raise
            return JobRecord.model_validate_json(body.read())

    def save_record(self, record: JobRecord) -> JobRecord:
        """Store ``record`` (stamped with the time), and return it."""
        record = record.model_copy(update={"updated_at": datetime.now(UTC)})
        with aws_errors("PutObject"):
            self.s3.put_object(
                Bucket=self.settings.bucket,
                Key=f"{self.prefix(record.owner, record.name)}record.json",
                Body=record.model_dump_json().encode(),
                ContentType="application/json",
            )
        return record

    # -- uploads -------------------------------------------------------------------------

    def upload_targets(self, record: JobRecord) -> list[UploadTarget]:
        """Presigned PUT URLs for each declared input: one URL, or one per part when large.

        The part size grows past the configured one when needed, so the answer never holds
        more than 10,000 URLs (see ``colony.hpc.parts``).
        """
        expiry = self.settings.presign_expiry_seconds
        expires_at = datetime.now(UTC) + timedelta(seconds=expiry)
        threshold = self.settings.multipart_threshold_bytes
        try:
            part_size = part_size_for(
                [artifact.size_bytes for artifact in record.artifacts],
                threshold=threshold,
                part_size=self.settings.part_size_bytes,
                max_urls=self.settings.max_upload_urls,
            )
        except ValueError as error:
            raise HPCRequestError(f"artifacts: {error}", status_code=422) from None
        targets = []
        for artifact in record.artifacts:
            s3_key = f"{self.prefix(record.owner, record.name)}inputs/{artifact.key}"
            common = {"Bucket": self.settings.bucket, "Key": s3_key}
            if artifact.size_bytes < threshold:
                with aws_errors("PutObject"):
                    url = self.s3.generate_presigned_url(
                        "put_object", Params={**common, "ContentType": artifact.content_type}, ExpiresIn=expiry
                    )
                targets.append(
                    UploadTarget(
                        key=artifact.key,
                        s3_key=s3_key,
                        url=url,
                        content_type=artifact.content_type,
                        expires_at=expires_at,
                    )
                )
                continue
            count = -(-artifact.size_bytes // part_size)
            with aws_errors("CreateMultipartUpload"):
                upload_id = self.s3.create_multipart_upload(**common, ContentType=artifact.content_type)["UploadId"]
                parts = [
                    UploadPart(
                        part_number=number,
                        url=self.s3.generate_presigned_url(
                            "upload_part",
                            Params={**common, "UploadId": upload_id, "PartNumber": number},
                            ExpiresIn=expiry,
                        ),
                    )
                    for number in range(1, count + 1)
                ]
            targets.append(
                UploadTarget(
                    key=artifact.key,
                    s3_key=s3_key,
                    upload_id=upload_id,
                    part_size=part_size,
                    parts=parts,
                    expires_at=expires_at,
                )
            )
        return targets

    def complete_upload(self, record: JobRecord, key: str, upload_id: str, parts: list[tuple[int, str]]) -> None:
        """Join the uploaded parts of one multipart upload into the artifact."""
        with aws_errors("CompleteMultipartUpload"):
            self.s3.complete_multipart_upload(
                Bucket=self.settings.bucket,
                Key=f"{self.prefix(record.owner, record.name)}inputs/{key}",
                UploadId=upload_id,
                MultipartUpload={"Parts": [{"PartNumber": number, "ETag": etag} for number, etag in parts]},
            )

    def missing_artifacts(self, record: JobRecord) -> list[str]:
        """Declared inputs with no object in S3 (or an object of the wrong size)."""
        inputs = f"{self.prefix(record.owner, record.name)}inputs/"
        with aws_errors("ListObjectsV2"):
            pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.settings.bucket, Prefix=inputs)
            sizes = {item["Key"]: item["Size"] for page in pages for item in page.get("Contents", [])}
        return [
            artifact.key for artifact in record.artifacts if sizes.get(f"{inputs}{artifact.key}") != artifact.size_bytes
        ]

    # -- Batch ---------------------------------------------------------------------------

    def job_definition_exists(self, definition: str) -> bool:
        """Whether Batch has an ACTIVE job definition by this name (or ARN)."""
        with aws_errors("DescribeJobDefinitions"):
            if definition.startswith("arn:"):
                found = self.batch.describe_job_definitions(jobDefinitions=[definition])
            else:
                found = self.batch.describe_job_definitions(jobDefinitionName=definition, status="ACTIVE")
        return bool(found.get("jobDefinitions"))

    def find_batch_job(self, owner: str, name: str) -> str | None:
        """The id of a job Colony already submitted for ``owner`` under ``name`` (any state), if any.

        ListJobs with a JOB_NAME filter covers every status; a match must also carry
        Colony's name and owner tags, so a same-named job submitted by someone else
        (or for another principal) is not adopted.
        """
        candidates: list[str] = []
        with aws_errors("ListJobs"):
            pages = self.batch.get_paginator("list_jobs").paginate(
                jobQueue=self.settings.job_queue, filters=[{"name": "JOB_NAME", "values": [name]}]
            )
            candidates = [
                str(summary["jobId"])
                for page in pages
                for summary in page.get("jobSummaryList", [])
                if summary.get("jobName") == name
            ]
        if not candidates:
            return None
        with aws_errors("DescribeJobs"):
            jobs = self.batch.describe_jobs(jobs=candidates[:100]).get("jobs", [])
        wanted = {JOB_NAME_TAG: name, JOB_OWNER_TAG: owner_key(owner)}
        tagged = [job for job in jobs if all(job.get("tags", {}).get(tag) == value for tag, value in wanted.items())]
        tagged.sort(key=lambda job: job.get("createdAt", 0))
        return str(tagged[0]["jobId"]) if tagged else None

    def submit(self, record: JobRecord, attempt_seconds: int) -> str:
        """Submit the job to Batch under its deterministic name; its id."""
        resources = record.resources
        requirements = [
            {"type": "VCPU", "value": str(resources.min_vcpus)},
            {"type": "MEMORY", "value": str(int(resources.min_memory_gb * 1024))},
        ]
        if resources.gpu is not None:
            requirements.append({"type": "GPU", "value": str(resources.gpu.count)})
        environment = [
            {"name": "COLONY_HPC_INPUT_URI", "value": record.input_prefix},
            {"name": "COLONY_HPC_OUTPUT_URI", "value": record.output_prefix},
        ]
        if self.settings.aws_endpoint_url:
            environment.append({"name": "AWS_ENDPOINT_URL", "value": self.settings.aws_endpoint_url})
        with aws_errors("SubmitJob"):
            answer = self.batch.submit_job(
                jobName=record.name,
                jobQueue=self.settings.job_queue,
                jobDefinition=record.job_definition,
                parameters=record.parameters,
                containerOverrides={"environment": environment, "resourceRequirements": requirements},
                timeout={"attemptDurationSeconds": max(60, attempt_seconds)},
                tags={JOB_NAME_TAG: record.name, JOB_OWNER_TAG: owner_key(record.owner)},
            )
        return str(answer["jobId"])

    def describe(self, job_id: str) -> tuple[JobState, str, str | None]:
        """(state, status reason, log stream name) of one Batch job."""
        with aws_errors("DescribeJobs"):
            jobs = self.batch.describe_jobs(jobs=[job_id]).get("jobs", [])
        if not jobs:
            return JobState.FAILED, f"Batch no longer knows job {job_id}", None
        job = jobs[0]
        stream = job.get("container", {}).get("logStreamName")
        return JobState(job["status"]), str(job.get("statusReason", "")), stream

    def terminate(self, job_id: str, reason: str) -> None:
        """Ask Batch to stop the job, whatever state it is in."""
        with aws_errors("TerminateJob"):
            self.batch.terminate_job(jobId=job_id, reason=reason)

    def log_tail(self, stream: str | None, lines: int = 20) -> list[str]:
        """The last ``lines`` log lines of a job's CloudWatch stream (none if it has no stream)."""
        if not stream:
            return []
        with aws_errors("GetLogEvents"):
            events = self.logs.get_log_events(
                logGroupName=_LOG_GROUP, logStreamName=stream, limit=lines, startFromHead=False
            ).get("events", [])
        return [str(event["message"]) for event in events]

    # -- outputs -------------------------------------------------------------------------

    def outputs(self, record: JobRecord) -> list[OutputArtifact]:
        """Every object under the job's output prefix, with a presigned GET URL."""
        prefix = f"{self.prefix(record.owner, record.name)}outputs/"
        found = []
        with aws_errors("ListObjectsV2"):
            pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.settings.bucket, Prefix=prefix)
            for page in pages:
                for item in page.get("Contents", []):
                    url = self.s3.generate_presigned_url(
                        "get_object",
                        Params={"Bucket": self.settings.bucket, "Key": item["Key"]},
                        ExpiresIn=self.settings.presign_expiry_seconds,
                    )
                    found.append(OutputArtifact(key=item["Key"][len(prefix) :], size_bytes=item["Size"], url=url))
        return found
