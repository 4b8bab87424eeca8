"""``colony hpc serve``: the real command, on loopback, over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def serving(aws: MotoServer) -> Iterator[str]:
    """``colony hpc serve`` on a free loopback port, until the block ends: its URL."""
    port = free_port()
    env = {**os.environ, "COLONY_HPC_TOKEN": "t", "COLONY_HPC_AWS_ENDPOINT_URL": aws.url}
    command = [str(Path(sys.executable).with_name("colony")), "hpc", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, "colony hpc serve did not start"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_serve_answers_health_and_openapi(aws: MotoServer) -> None:
    with serving(aws) as url:
        assert httpx.get(f"{url}/v1/health").json() == {"status": "ok"}
        assert "/v1/jobs" in httpx.get(f"{url}/openapi.json").json()["paths"]
        assert httpx.get(f"{url}/v1/jobs/x").status_code == 401


def test_serve_caps_bodies_and_trickled_headers_before_any_token_is_read(aws: MotoServer) -> None:
    # Served bare, an unauthenticated 300 MB body was read whole (995 MB of memory) before the
    # answer 401, and a connection sending a header line every 2 s stayed open for good.
    with serving(aws) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as huge:
            huge.sendall(b"POST /v1/jobs HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n")
            huge.sendall(b"content-length: 314572800\r\n\r\n" + b"{" * 1024)
            answer = huge.recv(65536)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        with socket.create_connection(("127.0.0.1", port), timeout=1) as trickle:
            trickle.sendall(b"GET /v1/health HTTP/1.1\r\n")
            started, ended = time.monotonic(), False
            while not ended and time.monotonic() - started < 20:
                try:
                    trickle.sendall(b"x-slow: 1\r\n")
                    trickle.recv(4096)  # an answer (408) or the end of the connection
                    ended = True
                except TimeoutError:
                    continue  # nothing yet: one more header line
                except OSError:
                    ended = True  # reset while sending
            assert ended and time.monotonic() - started < 15, "a connection trickling its headers stayed open"
        assert httpx.get(f"{url}/v1/health").json() == {"status": "ok"}  # still serving
