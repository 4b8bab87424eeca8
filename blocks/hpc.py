"""The HPC configuration as a Prefect Block, for deployments.

The library reads a plain ``colony.hpc.HPCSettings`` (from ``COLONY_HPC_*`` by
default); this block stores the same values on the Prefect server, the token
as a secret, and produces those settings.
"""

from __future__ import annotations

from prefect.blocks.core import Block
from pydantic import Field, SecretStr

from colony.hpc import HPCLimits, HPCSettings

MiB = 1024 * 1024

__all__ = ["HPCConfig", "load_hpc_settings"]

TRANSFER_FIELDS = (
    "presign_expiry_seconds",
    "multipart_threshold_bytes",
    "part_size_bytes",
    "max_upload_urls",
    "request_timeout_seconds",
)


class HPCConfig(Block):
    """Where Colony's HPC service runs and what it may submit to AWS Batch.

    Example:
        Load a stored configuration and build the service's settings from it:
        ```python
        from blocks.hpc import HPCConfig

        hpc_config = HPCConfig.load("BLOCK_NAME")
        settings = hpc_config.settings()
        ```
    """

    _block_type_name = "Colony HPC"
    _documentation_url = "https://docs.aws.amazon.com/batch/latest/userguide/what-is-batch.html"  # type: ignore[assignment]

    endpoint: str = Field(default="http://127.0.0.1:8765", description="Base URL of the Colony HPC REST service.")
    token: SecretStr = Field(description="Bearer token the HPC service requires of every client.")
    token_owner: str = Field(default="default", description="Agent id of the principal `token` authenticates as.")
    tokens: SecretStr = Field(
        default=SecretStr(""),
        description='The service\'s token table, JSON: {"<token>": {"agent": "engineer-1", "capabilities": '
        '["tool:*"], "operator": false}}; empty for the single token alone.',
    )
    bucket: str = Field(default="colony-hpc", description="S3 bucket for job records, inputs and outputs.")
    job_queue: str = Field(default="colony-hpc", description="AWS Batch job queue that jobs are submitted to.")
    job_definitions: dict[str, str] = Field(
        default_factory=dict, description="AWS Batch job definition (name or ARN) for each tool name."
    )
    max_vcpus: int = Field(default=64, ge=1, description="Operator limit: most vCPUs one job may ask for.")
    max_memory_gb: float = Field(default=256.0, gt=0, description="Operator limit: most memory one job may ask for.")
    max_gpus: int = Field(default=0, ge=0, description="Operator limit: most GPUs one job may ask for.")
    max_wallclock_seconds: float = Field(
        default=86400.0, gt=0, description="Operator limit: longest one job may run, in seconds."
    )
    region: str = Field(default="us-east-1", description="AWS region of the bucket and the job queue.")
    aws_endpoint_url: str | None = Field(
        default=None, description="Endpoint override for every AWS service (a moto_server); leave empty for AWS."
    )

    # The transfer settings, as HPCSettings declares them (tokens_file is a path on each machine).
    presign_expiry_seconds: int = Field(default=3600, ge=1, description="Lifetime of presigned URLs.")
    multipart_threshold_bytes: int = Field(
        default=64 * MiB, ge=5 * MiB, description="Artifacts at least this large upload in parts."
    )
    part_size_bytes: int = Field(
        default=16 * MiB,
        ge=5 * MiB,
        le=5 * 1024 * MiB,
        description="Bytes per part of a multipart upload; grown when a job needs more.",
    )
    max_upload_urls: int = Field(
        default=10_000, ge=1, le=10_000, description="Most presigned upload URLs one job's answer holds (S3: 10,000)."
    )
    request_timeout_seconds: float = Field(default=30.0, gt=0, description="Client timeout per HTTP request.")

    def settings(self) -> HPCSettings:
        """The plain settings object the library, the service and the client take."""
        return HPCSettings(
            endpoint=self.endpoint,
            token=self.token,
            token_owner=self.token_owner,
            tokens=self.tokens,
            bucket=self.bucket,
            job_queue=self.job_queue,
            job_definitions=dict(self.job_definitions),
            limits=HPCLimits(
                max_vcpus=self.max_vcpus,
                max_memory_gb=self.max_memory_gb,
                max_gpus=self.max_gpus,
                max_wallclock_seconds=self.max_wallclock_seconds,
            ),
            region=self.region,
            aws_endpoint_url=self.aws_endpoint_url,
            **{name: getattr(self, name) for name in TRANSFER_FIELDS},
        )

    @classmethod
    def from_settings(cls, settings: HPCSettings) -> HPCConfig:
        """A block holding ``settings`` (e.g. the environment's), ready to ``.save(...)``."""
        limits = settings.limits
        return cls(
            endpoint=settings.endpoint,
            token=settings.token,
            token_owner=settings.token_owner,
            tokens=settings.tokens,
            bucket=settings.bucket,
            job_queue=settings.job_queue,
            job_definitions=dict(settings.job_definitions),
            max_vcpus=limits.max_vcpus,
            max_memory_gb=limits.max_memory_gb,
            max_gpus=limits.max_gpus,
            max_wallclock_seconds=limits.max_wallclock_seconds,
            region=settings.region,
            aws_endpoint_url=settings.aws_endpoint_url,
            **{name: getattr(settings, name) for name in TRANSFER_FIELDS},
        )


def load_hpc_settings(block_name: str | None = None) -> HPCSettings:
    """The named block's settings; without a name, the environment default (``COLONY_HPC_*``)."""
    if block_name is None:
        return HPCSettings()
    return HPCConfig.load(block_name).settings()  # type: ignore[union-attr]
