"""The HPC service over real HTTP (uvicorn in a thread), on moto's S3 and Batch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn
from pydantic import SecretStr

from colony.hpc import HPCClient, HPCClientConfig, HPCLimits, HPCSettings
from colony.hpc.service import create_app
from tests.services import free_port

if TYPE_CHECKING:
    from tests.services.moto import MotoServer

TOKEN = "test-token"
#: The principal TOKEN authenticates as (HPCSettings.token_owner's default).
OWNER = "default"
QUEUE = "colony-hpc"
#: The local image a Docker-backed job runs in; built by ``job_image`` (tests/services/hpc_image.py).
JOB_IMAGE = "colony-hpc-job:test"


def register_job_definition(aws: MotoServer, name: str, command: list[str], **container: Any) -> str:
    """Register a Batch job definition in moto; its name."""
    aws.client("batch").register_job_definition(
        jobDefinitionName=name,
        type="container",
        containerProperties={
            "image": JOB_IMAGE,
            "command": command,
            "resourceRequirements": [{"type": "VCPU", "value": "1"}, {"type": "MEMORY", "value": "512"}],
            **container,
        },
    )
    return name


@dataclass
class HPCStack:
    """A running HPC service, its settings and a client for it."""

    url: str
    settings: HPCSettings
    client: HPCClient
    aws: MotoServer

    def key(self, name: str, path: str, owner: str = OWNER) -> str:
        """The S3 key of ``path`` (``record.json``, ``inputs/x``, ``outputs/y``) of ``owner``'s job ``name``."""
        return f"jobs/{owner}/{name}/{path}"

    def put_output(self, name: str, key: str, body: bytes, owner: str = OWNER) -> None:
        """Play the job's part: write one output object under the job's output prefix."""
        self.aws.client("s3").put_object(
            Bucket=self.settings.bucket, Key=self.key(name, f"outputs/{key}", owner), Body=body
        )

    def batch_jobs(self, name: str) -> list[dict[str, Any]]:
        """Every Batch job in the queue named ``name``, whatever its state."""
        batch = self.aws.client("batch")
        states = ("SUBMITTED", "PENDING", "RUNNABLE", "STARTING", "RUNNING", "SUCCEEDED", "FAILED")
        return [
            job
            for state in states
            for job in batch.list_jobs(jobQueue=QUEUE, jobStatus=state)["jobSummaryList"]
            if job["jobName"] == name
        ]


def aws_settings(moto: MotoServer, **overrides: Any) -> HPCSettings:
    """A bucket, a compute environment and a queue in moto, and settings naming them."""
    moto.client("s3").create_bucket(Bucket="colony-hpc")
    role = moto.client("iam").create_role(
        RoleName="colony-batch", AssumeRolePolicyDocument='{"Version": "2012-10-17", "Statement": []}'
    )["Role"]["Arn"]
    batch = moto.client("batch")
    batch.create_compute_environment(
        computeEnvironmentName="colony", type="UNMANAGED", state="ENABLED", serviceRole=role
    )
    batch.create_job_queue(
        jobQueueName=QUEUE,
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": "colony"}],
    )
    register_job_definition(moto, "colony-echo", ["/bin/busybox", "true"])
    values: dict[str, Any] = {
        "token": SecretStr(TOKEN),
        "bucket": "colony-hpc",
        "job_queue": QUEUE,
        "job_definitions": {"echo": "colony-echo"},
        "limits": HPCLimits(max_vcpus=16, max_memory_gb=64, max_gpus=1, max_wallclock_seconds=7200),
        "aws_endpoint_url": moto.url,
        "multipart_threshold_bytes": 5 * 1024 * 1024,
        "part_size_bytes": 5 * 1024 * 1024,
        **overrides,
    }
    return HPCSettings(**values)


class _ThreadedServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test process keeps its own handlers
        pass


def serve(app: Any, port: int) -> Callable[[], None]:
    """Run ``app`` with uvicorn on 127.0.0.1:``port`` in a thread; a function that stops it."""
    server = _ThreadedServer(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the HPC service did not start")
        time.sleep(0.02)

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)

    return stop


@pytest.fixture
def start_hpc(aws: MotoServer) -> Iterator[Callable[..., HPCStack]]:
    """Start an HPC service on moto, settings overridden by keyword; every one stopped after the test."""
    base = aws_settings(aws)
    stops: list[Callable[[], None]] = []

    def start(**overrides: Any) -> HPCStack:
        settings = HPCSettings.model_validate({**base.model_dump(), "token": base.token, **overrides})
        token = settings.token if settings.token.get_secret_value() else SecretStr(TOKEN)
        port = free_port()
        stops.append(serve(create_app(settings), port))
        url = f"http://127.0.0.1:{port}"
        client = HPCClient(HPCClientConfig(endpoint=url, token=token, retries=1, retry_backoff_seconds=0.01))
        return HPCStack(url=url, settings=settings.model_copy(update={"endpoint": url}), client=client, aws=aws)

    yield start
    for stop in stops:
        stop()


@pytest.fixture
def hpc_stack(start_hpc: Callable[..., HPCStack]) -> HPCStack:
    """The HPC service with the default test settings."""
    return start_hpc()
