"""Real Colony gateways: ``colony gateway`` in its own process, on a free loopback port."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.services import free_port, unavailable

REPO_ROOT = Path(__file__).resolve().parents[2]
COLONY = Path(sys.executable).parent / "colony"

StartGateway = Callable[..., str]


def start_gateway_process(
    env: dict[str, str | None], port: int, timeout: float = 120.0, *, args: tuple[str, ...] = ()
) -> subprocess.Popen[bytes]:
    """Start ``colony gateway [args]`` on ``port`` with ``env`` added (None unsets), and wait until /health answers."""
    if not COLONY.exists():
        unavailable(f"{COLONY} is not installed (pip install -e .)")
    added = {"PYTHONPATH": str(REPO_ROOT), "COLONY_GATEWAY_PORT": str(port), **env}
    environment = {name: value for name, value in {**os.environ, **added}.items() if value is not None}
    process = subprocess.Popen(
        [str(COLONY), "gateway", *args], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"colony gateway exited with {process.returncode}: {error[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    process.wait()  # reaped and closed here, not in whichever test the garbage collector runs in
    if process.stderr:
        process.stderr.close()
    pytest.fail(f"colony gateway did not answer /health on port {port} within {timeout:g} s")


def stop_gateway_process(process: subprocess.Popen[bytes]) -> None:
    """Stop a gateway ``start_gateway_process`` started: SIGTERM, then SIGKILL after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr:
        process.stderr.close()


@contextmanager
def gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartGateway]:
    """A factory: ``start(**env)`` runs a gateway with its own COLONY_HOME and returns its URL; all stop on exit."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(**env: str) -> str:
        port = free_port()
        home = tmp_path_factory.mktemp("gateway-home")
        processes.append(start_gateway_process({"COLONY_HOME": str(home), **env}, port))
        return f"http://127.0.0.1:{port}"

    try:
        yield start
    finally:
        for process in processes:
            stop_gateway_process(process)


@pytest.fixture(scope="module")
def start_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartGateway]:
    """Gateways for one module's tests, stopped when the module ends (an idle gateway still costs CPU)."""
    with gateways(tmp_path_factory) as start:
        yield start


@pytest.fixture(scope="session")
def start_session_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartGateway]:
    """Gateways shared by the whole session (``gateway_url``, ``governed_gateway``, ``secured``)."""
    with gateways(tmp_path_factory) as start:
        yield start


GATEWAY_MAX_BODY_BYTES = 65536
GATEWAY_MAX_ARGUMENT_BYTES = 16384


@pytest.fixture(scope="session")
def gateway_url(start_session_gateway: StartGateway) -> str:
    """An open gateway (no tokens) on loopback, serving the repository's catalog, with small caps.

    Shared by the whole session: its kernel state belongs to the MCP seed-example
    test (tests/colony/surfaces/test_mcp_http.py); other tests call catalog tools only.
    """
    return start_session_gateway(
        COLONY_GATEWAY_MAX_BODY_BYTES=str(GATEWAY_MAX_BODY_BYTES),
        COLONY_GATEWAY_MAX_ARGUMENT_BYTES=str(GATEWAY_MAX_ARGUMENT_BYTES),
    )
