"""The hpc-job flow with jobs that really run: moto's Batch on the local Docker engine."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from colony.errors import HPCJobFailedError
from colony.hpc import JobState
from flows.hpc_job import hpc_job
from tests.flows.test_hpc_job import FAST, job_request
from tests.services.hpc import TOKEN, HPCStack, register_job_definition
from tests.services.hpc_image import REPO_ROOT

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture
def docker_stack(hpc_stack: HPCStack, job_image: str) -> HPCStack:
    """The HPC service, with moto running Batch jobs as containers of ``job_image``."""
    hpc_stack.aws.configure(batch_docker=True)
    return hpc_stack


def use_job_definition(stack: HPCStack, command: list[str]) -> None:
    register_job_definition(stack.aws, "colony-echo", command)


async def test_a_failed_job_reports_its_reason_and_log_tail(
    prefect_harness: str, docker_stack: HPCStack, tmp_path: Path
) -> None:
    use_job_definition(docker_stack, ["/bin/sh", "-c", "echo reading deck; echo 'mesh too coarse' >&2; exit 3"])
    with pytest.raises(HPCJobFailedError) as caught:
        await hpc_job(job_request(docker_stack, tmp_path, name="echo-fails"))
    assert any("mesh too coarse" in line for line in caught.value.log_tail)
    assert "mesh too coarse" in str(caught.value)
    assert docker_stack.batch_jobs("echo-fails")[0]["status"] == "FAILED"


def _wait_for_line(process: subprocess.Popen[str], needle: str, seen: list[str], timeout: float) -> bool:
    found = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if needle in line:
                found.set()

    threading.Thread(target=read, daemon=True).start()
    return found.wait(timeout)


async def test_a_killed_flow_resumes_the_same_batch_job(
    prefect_harness: str, docker_stack: HPCStack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    use_job_definition(docker_stack, ["/bin/sh", "-c", "echo simulating; sleep 6; echo done"])
    request = job_request(docker_stack, tmp_path, name="echo-killed").model_copy(update={"client": None})
    request_file = tmp_path / "request.json"
    request_file.write_text(request.model_dump_json())
    env = {
        **os.environ,
        "PREFECT_API_URL": prefect_harness,
        "COLONY_HPC_ENDPOINT": docker_stack.url,
        "COLONY_HPC_TOKEN": TOKEN,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.flows.hpc_job_runner", str(request_file)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert _wait_for_line(process, "RUNNING after", seen, timeout=90), "".join(seen[-20:])
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (await docker_stack.client.status("echo-killed")).state is JobState.RUNNING

    batch_job_id = (await docker_stack.client.status("echo-killed")).batch_job_id
    with caplog.at_level(logging.INFO):
        outputs = await hpc_job(job_request(docker_stack, tmp_path, name="echo-killed", poll=FAST))
    assert outputs == {}
    assert f"resuming Batch job {batch_job_id} (RUNNING)" in caplog.text
    (job,) = docker_stack.batch_jobs("echo-killed")
    assert job["status"] == "SUCCEEDED"
