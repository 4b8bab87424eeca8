"""HPC tools on AWS Batch: the service's client, the capability base, the job cycle and its runners.

The REST service the tools call is ``colony.hpc.service``, apart; ``create_app`` is re-exported here.
Names are imported on first use (PEP 562): reading the HPC settings, as every command does
through ``colony.settings``, needs neither FastAPI (the service) nor boto3 (the backend).
"""

from typing import TYPE_CHECKING

from colony._exports import imported_on_use

if TYPE_CHECKING:
    from colony.hpc.capability import HPCToolCapability
    from colony.hpc.client import HPCClient, HPCClientConfig
    from colony.hpc.cycle import InputArtifact, PollPolicy, job_name, poll_until_done, upload_inputs
    from colony.hpc.hooks import InputArtifactDescriptor
    from colony.hpc.job_steps import HPCJob
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

_MODULE_OF = {
    "ArtifactDescriptor": "colony.hpc.models",
    "HPCClient": "colony.hpc.client",
    "HPCClientConfig": "colony.hpc.client",
    "HPCJob": "colony.hpc.job_steps",
    "HPCLimits": "colony.hpc.settings",
    "HPCSettings": "colony.hpc.settings",
    "HPCToolCapability": "colony.hpc.capability",
    "InProcessJobRunner": "colony.hpc.runner",
    "InputArtifact": "colony.hpc.cycle",
    "InputArtifactDescriptor": "colony.hpc.hooks",
    "JobCreated": "colony.hpc.models",
    "JobRecord": "colony.hpc.models",
    "JobRequest": "colony.hpc.models",
    "JobRunner": "colony.hpc.runner",
    "JobState": "colony.hpc.models",
    "JobStatus": "colony.hpc.models",
    "OutputArtifact": "colony.hpc.models",
    "PollPolicy": "colony.hpc.cycle",
    "UploadTarget": "colony.hpc.models",
    "create_app": "colony.hpc.service",
    "default_job_runner": "colony.hpc.runner",
    "job_name": "colony.hpc.cycle",
    "poll_until_done": "colony.hpc.cycle",
    "set_default_job_runner": "colony.hpc.runner",
    "upload_inputs": "colony.hpc.cycle",
}

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


__getattr__ = imported_on_use(__name__, _MODULE_OF)
