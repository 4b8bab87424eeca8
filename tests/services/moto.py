"""A real ``moto_server`` on a free loopback port, for boto3 (S3, Batch, CloudWatch Logs).

Batch runs without Docker by default (``/moto-api/config``: jobs succeed at once);
``moto_batch_docker`` switches a test to real containers, started by moto on the
local Docker engine in host networking so a job reaches moto on loopback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.services import free_port, unavailable

AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@dataclass(frozen=True)
class MotoServer:
    """A running moto_server."""

    url: str

    def configure(self, *, batch_docker: bool) -> None:
        """Turn moto's Docker-backed Batch on or off."""
        response = httpx.post(f"{self.url}/moto-api/config", json={"batch": {"use_docker": batch_docker}})
        response.raise_for_status()

    def reset(self) -> None:
        """Forget every resource (buckets, queues, jobs)."""
        httpx.post(f"{self.url}/moto-api/reset").raise_for_status()


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """moto_server on 127.0.0.1, Batch without Docker; stopped at the end of the session."""
    executable = Path(sys.executable).with_name("moto_server")
    if not executable.exists():
        unavailable("moto_server is not installed (pip install 'moto[server]')")
    port = free_port()
    env = {**os.environ, **AWS_ENV, "MOTO_DOCKER_NETWORK_MODE": "host", "MOTO_PORT": str(port)}
    process = subprocess.Popen(
        [str(executable), "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = MotoServer(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{server.url}/moto-api/data.json", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    unavailable("moto_server did not start")
                time.sleep(0.1)
        server.configure(batch_docker=False)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def aws(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoServer]:
    """A freshly reset moto, with boto3 pointed at it through the environment."""
    moto_server.reset()
    moto_server.configure(batch_docker=False)
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.url)
    yield moto_server
    moto_server.configure(batch_docker=False)
