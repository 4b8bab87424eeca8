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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from tests.services import free_port, unavailable

AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@dataclass
class MotoServer:
    """A running moto_server, with boto3 clients for it (closed when the session ends)."""

    url: str
    clients: dict[str, Any] = field(default_factory=dict)

    def client(self, service: str) -> Any:
        """A boto3 client of ``service`` pointed at this server."""
        if service not in self.clients:
            self.clients[service] = boto3.client(
                service,
                endpoint_url=self.url,
                region_name=AWS_ENV["AWS_DEFAULT_REGION"],
                aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
            )
        return self.clients[service]

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
        for client in server.clients.values():
            client.close()
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
