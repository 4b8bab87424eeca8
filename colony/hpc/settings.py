"""HPC configuration: a plain pydantic settings object, read from ``COLONY_HPC_*``.

It is the ``hpc`` part of ``colony.settings.ColonySettings``, which deployments keep
whole in a Prefect Block (``blocks.ColonyConfig``); nothing in ``colony/`` imports the block.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import SettingsConfigDict
from pydantic_settings import SettingsError as EnvParseError

from colony.environment import EnvironmentSettings
from colony.errors import SettingsError
from colony.spec import ResourceRequirements, SpecModel

__all__ = ["HPCLimits", "HPCSettings"]

MiB = 1024 * 1024


class HPCLimits(SpecModel):
    """The operator's caps on one job; a run asking for more is refused before submit."""

    max_vcpus: int = Field(default=64, ge=1, description="Most vCPUs one job may ask for.")
    max_memory_gb: float = Field(default=256.0, gt=0, description="Most memory one job may ask for, in GB.")
    max_gpus: int = Field(default=0, ge=0, description="Most GPUs one job may ask for.")
    max_wallclock_seconds: float = Field(default=86400.0, gt=0, description="Longest one job may run.")

    def violations(self, resources: ResourceRequirements) -> list[str]:
        """One sentence per limit ``resources`` exceeds, naming the limit and both values."""
        found = []
        if resources.min_vcpus > self.max_vcpus:
            found.append(f"max_vcpus: asks for {resources.min_vcpus} vCPUs, limit is {self.max_vcpus}")
        if resources.min_memory_gb > self.max_memory_gb:
            found.append(f"max_memory_gb: asks for {resources.min_memory_gb:g} GB, limit is {self.max_memory_gb:g} GB")
        gpus = resources.gpu.count if resources.gpu else 0
        if gpus > self.max_gpus:
            found.append(f"max_gpus: asks for {gpus} GPUs, limit is {self.max_gpus}")
        wallclock = resources.expected_wallclock_seconds
        if wallclock is not None and wallclock > self.max_wallclock_seconds:
            found.append(f"max_wallclock_seconds: expects {wallclock:g} s, limit is {self.max_wallclock_seconds:g} s")
        return found


class HPCSettings(EnvironmentSettings):
    """Where the HPC service is and what it may run; every field from ``COLONY_HPC_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="COLONY_HPC_", env_nested_delimiter="__", extra="forbid")

    endpoint: str = Field(default="http://127.0.0.1:8765", description="Base URL of the HPC REST service.")
    token: SecretStr = Field(
        default=SecretStr(""),
        description="Bearer token: the client presents it; the service accepts it as one principal.",
    )
    token_owner: str = Field(
        default="default",
        min_length=1,
        description="Agent id of the principal `token` authenticates as, on the service.",
    )
    tokens: SecretStr = Field(
        default=SecretStr(""),
        description='The service\'s token table, JSON: {"<token>": {"agent": "engineer-1", "capabilities": '
        '["tool:*"], "operator": false}}.',
    )
    tokens_file: Path | None = Field(
        default=None,
        description="A file holding the service's token table (JSON); a path on each machine, never kept in a block.",
    )
    bucket: str = Field(default="colony-hpc", description="S3 bucket for job records and artifacts.")
    job_queue: str = Field(default="colony-hpc", description="AWS Batch job queue jobs are submitted to.")
    job_definitions: dict[str, str] = Field(
        default_factory=dict, description="Batch job definition (name or ARN) per tool name."
    )
    limits: HPCLimits = Field(default_factory=HPCLimits, description="The operator's caps on one job.")
    region: str = Field(default="us-east-1", description="AWS region of the bucket and queue.")
    aws_endpoint_url: str | None = Field(
        default=None, description="Override for every AWS endpoint (a moto_server); unset against AWS."
    )
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

    @classmethod
    def from_env(cls) -> HPCSettings:
        """The settings from ``COLONY_HPC_*`` variables; a bad one is a SettingsError naming the variable."""
        try:
            return cls()
        except EnvParseError as error:  # a structured variable (JSON) that does not parse
            field = re.search(r'field "(\w+)"', str(error))
            where = f"COLONY_HPC_{field.group(1).upper()}" if field else "COLONY_HPC_*"
            raise SettingsError(f"invalid HPC settings: {where}: not valid JSON") from None
        except ValidationError as error:
            problems = "; ".join(
                f"COLONY_HPC_{'__'.join(map(str, item['loc'])).upper()}: {item['msg']}"
                for item in error.errors(include_url=False)
            )
            raise SettingsError(f"invalid HPC settings: {problems}") from None
