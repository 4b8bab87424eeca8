"""HPC figures: upload memory, polls of a simulated hour-long job, the largest job's upload URLs,
and fresh job vs cache hit, in-process and as the hpc-job flow.

Starts its own moto_server (Batch without Docker) and HPC service on loopback.
The upload is measured in a child process: its peak RSS (VmHWM, reset first)
over its RSS just before the upload.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import boto3
import httpx
import uvicorn
from pydantic import SecretStr

from colony.hpc import (
    ArtifactDescriptor,
    HPCClient,
    HPCClientConfig,
    HPCJob,
    HPCSettings,
    InProcessJobRunner,
    JobRequest,
    JobState,
    JobStatus,
    PollPolicy,
    create_app,
)
from colony.hpc.cycle import InputArtifact, poll_until_done
from colony.hpc.parts import MAX_OBJECT_BYTES

MiB = 1024 * 1024
UPLOAD_BYTES = 512 * MiB
TOKEN = "bench-token"
AWS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}

_CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from colony.hpc import ArtifactDescriptor, HPCClient, HPCClientConfig, JobRequest

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

async def main(endpoint, path, mode):
    path = Path(path)
    client = HPCClient(HPCClientConfig(endpoint=endpoint, token="bench-token", timeout_seconds=300))
    size = path.stat().st_size
    created = await client.create_job(JobRequest(
        name=f"upload-{mode}", tool="echo", artifacts=[ArtifactDescriptor(key="big.bin", size_bytes=size)]))
    before = status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    if mode == "stream":
        await client.upload(f"upload-{mode}", created.uploads[0], path)
    else:
        data = path.read_bytes()
        assert len(data) == size
    print(json.dumps({"before": before, "peak": status("VmHWM")}))

asyncio.run(main(*sys.argv[1:]))
"""


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    moto = Path(sys.executable).with_name("moto_server")
    process = subprocess.Popen(
        [str(moto), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(f"{url}/moto-api/data.json", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    httpx.post(f"{url}/moto-api/config", json={"batch": {"use_docker": False}}).raise_for_status()
    return process, url


def provision(url: str) -> HPCSettings:
    options = {"endpoint_url": url, "region_name": "us-east-1"}
    boto3.client("s3", **options).create_bucket(Bucket="bench")
    role = boto3.client("iam", **options).create_role(RoleName="batch", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    batch = boto3.client("batch", **options)
    batch.create_compute_environment(
        computeEnvironmentName="bench-ce", type="UNMANAGED", state="ENABLED", serviceRole=role
    )
    batch.create_job_queue(
        jobQueueName="bench-queue",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": "bench-ce"}],
    )
    batch.register_job_definition(
        jobDefinitionName="bench-echo",
        type="container",
        containerProperties={
            "image": "busybox",
            "command": ["true"],
            "resourceRequirements": [{"type": "VCPU", "value": "1"}, {"type": "MEMORY", "value": "512"}],
        },
    )
    return HPCSettings(
        token=SecretStr(TOKEN),
        bucket="bench",
        job_queue="bench-queue",
        job_definitions={"echo": "bench-echo"},
        aws_endpoint_url=url,
    )


def serve(settings: HPCSettings) -> str:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}"


def upload_memory(endpoint: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "big.bin"
        with path.open("wb") as handle:
            block = os.urandom(MiB)
            for _ in range(UPLOAD_BYTES // MiB):
                handle.write(block)
        figures = {}
        for mode in ("stream", "read_whole_file"):
            started = time.perf_counter()
            answer = subprocess.run(
                [sys.executable, "-c", _CHILD, endpoint, str(path), mode], capture_output=True, text=True, check=True
            )
            elapsed = time.perf_counter() - started
            measured = json.loads(answer.stdout)
            figures[mode] = (measured["peak"] - measured["before"]) / MiB
            print(f"upload 512 MB [{mode}]: peak RSS +{figures[mode]:.1f} MB ({elapsed:.1f} s)")
        print(
            f"upload 512 MB: streamed peak-RSS rise {figures['stream']:.1f} MB (budget 64 MB, "
            f"{'OK' if figures['stream'] <= 64 else 'OVER'}); whole-file read {figures['read_whole_file']:.0f} MB; "
            f"ratio {figures['read_whole_file'] / max(figures['stream'], 0.1):.0f}x"
        )


class _SimulatedJob:
    """A fake client whose job finishes at a chosen simulated time."""

    def __init__(self, now: list[float], ends_at: float) -> None:
        self.now, self.ends_at, self.polls = now, ends_at, 0

    async def status(self, name: str) -> JobStatus:
        self.polls += 1
        state = JobState.SUCCEEDED if self.now[0] >= self.ends_at else JobState.RUNNING
        return JobStatus(name=name, state=state)


async def simulated_polls() -> None:
    for hours in (0.25, 1.0, 6.0):
        now = [0.0]

        async def sleep(seconds: float, now: list[float] = now) -> None:
            now[0] += seconds

        def clock(now: list[float] = now) -> float:
            return now[0]

        job = _SimulatedJob(now, hours * 3600)
        await poll_until_done(job, "sim", timeout_seconds=hours * 7200, clock=clock, sleep=sleep)
        overshoot = now[0] - hours * 3600
        print(f"simulated {hours:g} h job: {job.polls} polls, finished seen {overshoot:.0f} s late (default policy)")


async def largest_job_urls(endpoint: str) -> None:
    """The most upload URLs one request can cost: one input of S3's largest size."""
    client = HPCClient(HPCClientConfig(endpoint=endpoint, token=SecretStr(TOKEN), timeout_seconds=600))
    request = JobRequest(name="urls", tool="echo", artifacts=[ArtifactDescriptor(key="x", size_bytes=MAX_OBJECT_BYTES)])
    started = time.perf_counter()
    (target,) = (await client.create_job(request)).uploads
    elapsed = time.perf_counter() - started
    per_url = elapsed / len(target.parts)
    uncapped = MAX_OBJECT_BYTES // (16 * MiB)
    print(
        f"largest job: a 5 TiB input -> {len(target.parts)} upload URLs (parts of {(target.part_size or 0) // MiB} "
        f"MiB) in {elapsed:.1f} s ({per_url * 1000:.2f} ms/URL); with the configured 16 MiB parts it would be "
        f"{uncapped} URLs, ~{uncapped * per_url:.0f} s at that rate"
    )


def runners(endpoint: str) -> None:
    """Fresh job vs cache hit, run in-process and as the hpc-job flow, measured side by side."""
    from prefect.testing.utilities import prefect_test_harness

    from flows.hpc_job import HPCJobRequest, hpc_job

    config = HPCClientConfig(endpoint=endpoint, token=SecretStr(TOKEN))
    fast = PollPolicy(initial_seconds=0.05, max_seconds=0.2)
    in_process = InProcessJobRunner()
    with prefect_test_harness(server_startup_timeout=120), tempfile.TemporaryDirectory() as scratch:
        deck = Path(scratch) / "deck.json"
        deck.write_text('{"steps": 1}')

        def job(name: str) -> HPCJob:
            return HPCJob(
                tool="echo",
                name=name,
                artifacts=[InputArtifact(key="deck.json", path=deck)],
                poll=fast,
                output_dir=Path(scratch) / name,
                client=config,
            )

        def flow_run(name: str) -> None:
            asyncio.run(hpc_job(HPCJobRequest(**dict(job(name)))))

        def local_run(name: str) -> None:
            asyncio.run(in_process.run(job(name)))

        flow_run("warm-up")
        local_run("warm-up-local")
        figures: dict[str, tuple[list[float], list[float]]] = {"flow": ([], []), "in-process": ([], [])}
        for index in range(5):
            for label, run in (("flow", flow_run), ("in-process", local_run)):
                name = f"{label[:4]}-{index}"
                for attempt in figures[label]:
                    started = time.perf_counter()
                    run(name)
                    attempt.append(time.perf_counter() - started)
    median = {label: (statistics.median(fresh), statistics.median(hit)) for label, (fresh, hit) in figures.items()}
    for label, (miss, hit) in median.items():
        print(
            f"{label} runner: fresh job {miss * 1000:.0f} ms, cache hit {hit * 1000:.0f} ms (median of 5); "
            f"a cache hit is {miss / hit:.1f}x faster, no Batch job"
        )
    print(
        f"flow / in-process: fresh job {median['flow'][0] / median['in-process'][0]:.2f}x, "
        f"cache hit {median['flow'][1] / median['in-process'][1]:.2f}x (the price of tasks, retries, artifacts)"
    )


def main() -> None:
    os.environ.update(AWS)
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    moto, url = start_moto()
    try:
        endpoint = serve(provision(url))
        asyncio.run(simulated_polls())
        upload_memory(endpoint)
        asyncio.run(largest_job_urls(endpoint))
        runners(endpoint)
    finally:
        moto.terminate()
        moto.wait()


if __name__ == "__main__":
    main()
