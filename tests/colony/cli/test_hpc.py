"""``colony hpc serve``: the real command, on loopback, over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from colony.cli import app
from tests.services import free_port
from tests.services.moto import MotoServer


def test_serve_binds_loopback_by_default() -> None:
    result = CliRunner().invoke(app, ["hpc", "serve", "--help"])
    assert result.exit_code == 0
    assert "127.0.0.1" in result.output


def test_serve_refuses_to_start_without_a_token(monkeypatch) -> None:
    monkeypatch.delenv("COLONY_HPC_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["hpc", "serve"])
    assert result.exit_code == 1
    assert "needs a bearer token: set COLONY_HPC_TOKEN" in result.output


def test_serve_refuses_a_malformed_token_table_naming_it(monkeypatch) -> None:
    monkeypatch.delenv("COLONY_HPC_TOKEN", raising=False)
    monkeypatch.setenv("COLONY_HPC_TOKENS", '{"s3cret": {"agent": "a", "root": true}}')
    result = CliRunner().invoke(app, ["hpc", "serve"])
    assert result.exit_code == 1
    assert "COLONY_HPC_TOKENS: entry 1 of the token table is malformed (root: Extra inputs" in result.output
    assert "s3cret" not in result.output


def test_serve_answers_health_and_openapi(aws: MotoServer) -> None:
    port = free_port()
    env = {**os.environ, "COLONY_HPC_TOKEN": "t", "COLONY_HPC_AWS_ENDPOINT_URL": aws.url}
    command = [str(Path(sys.executable).with_name("colony")), "hpc", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, "colony hpc serve did not start"
                time.sleep(0.2)
        assert health.json() == {"status": "ok"}
        assert "/v1/jobs" in httpx.get(f"http://127.0.0.1:{port}/openapi.json").json()["paths"]
        assert httpx.get(f"http://127.0.0.1:{port}/v1/jobs/x").status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=10)
