"""HPC tools on AWS Batch: the REST service, its client, the capability base and the job cycle."""

from colony.hpc.capability import HPCToolCapability
from colony.hpc.client import HPCClient, HPCClientConfig
from colony.hpc.cycle import InputArtifact, PollPolicy, job_name, poll_until_done, upload_inputs
from colony.hpc.models import (
    ArtifactDescriptor,
    JobCreated,
    JobRecord,
    JobRequest,
    JobState,
    JobStatus,
    OutputArtifact,
    UploadTarget,
)
from colony.hpc.service import create_app
from colony.hpc.settings import HPCLimits, HPCSettings

__all__ = [
    "ArtifactDescriptor",
    "HPCClient",
    "HPCClientConfig",
    "HPCLimits",
    "HPCSettings",
    "HPCToolCapability",
    "InputArtifact",
    "JobCreated",
    "JobRecord",
    "JobRequest",
    "JobState",
    "JobStatus",
    "OutputArtifact",
    "PollPolicy",
    "UploadTarget",
    "create_app",
    "job_name",
    "poll_until_done",
    "upload_inputs",
]
