"""HPC tools on AWS Batch: the REST service, its client, the capability base, the job cycle and its runners."""

from colony.hpc.capability import HPCToolCapability
from colony.hpc.client import HPCClient, HPCClientConfig
from colony.hpc.cycle import InputArtifact, PollPolicy, job_name, poll_until_done, upload_inputs
from colony.hpc.hooks import InputArtifactDescriptor
from colony.hpc.job import HPCJob
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
from colony.hpc.runner import InProcessJobRunner, JobRunner, default_job_runner, set_default_job_runner
from colony.hpc.service import create_app
from colony.hpc.settings import HPCLimits, HPCSettings

__all__ = [
    "ArtifactDescriptor",
    "HPCClient",
    "HPCClientConfig",
    "HPCJob",
    "HPCLimits",
    "HPCSettings",
    "HPCToolCapability",
    "InProcessJobRunner",
    "InputArtifact",
    "InputArtifactDescriptor",
    "JobCreated",
    "JobRecord",
    "JobRequest",
    "JobRunner",
    "JobState",
    "JobStatus",
    "OutputArtifact",
    "PollPolicy",
    "UploadTarget",
    "create_app",
    "default_job_runner",
    "job_name",
    "poll_until_done",
    "set_default_job_runner",
    "upload_inputs",
]
