"""SIGTERM stops a gateway or a stdio MCP server without leaving its sandbox container behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from colony.kernel import ColonyKernel, KernelSettings
from colony.sandbox.ownership import OWNER_PID
from tests.security.conftest import CASE
from tests.services import free_port
from tests.services.gateway import start_gateway_process

SCRIPT = {"script": "echo hello", "stdin": ""}


def containers_of(docker_client: Any, pid: int) -> list[Any]:
    return docker_client.containers.list(all=True, filters={"label": f"{OWNER_PID}={pid}"})


def test_sigterm_to_the_gateway_removes_its_container(docker_client: Any, busybox_image: str, tmp_path: Path) -> None:
    ColonyKernel(KernelSettings(home=tmp_path)).set_trust("builder", 0.9)
    port = free_port()
    process = start_gateway_process({"COLONY_HOME": str(tmp_path)}, port)
    try:
        response = httpx.post(
            f"http://127.0.0.1:{port}/v1/tool_call",
            json={"tool_name": "shell_exec", "tool_args": SCRIPT, **CASE},
            headers={"x-colony-agent": "builder"},
            timeout=120,
        )
        assert response.status_code == 200, response.text
        assert response.json()["result"]["stdout"] == "hello\n"
        assert len(containers_of(docker_client, process.pid)) == 1
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        if process.stderr:
            process.stderr.close()
    assert containers_of(docker_client, process.pid) == []


def test_sigterm_to_colony_mcp_removes_its_container(docker_client: Any, busybox_image: str, tmp_path: Path) -> None:
    ColonyKernel(KernelSettings(home=tmp_path)).set_trust("builder", 0.9)
    colony = str(Path(sys.executable).parent / "colony")
    env = {**os.environ, "COLONY_HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen(
        [colony, "mcp", "--agent", "builder"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "shell_exec", "arguments": {**SCRIPT, **CASE}}},
    ]  # fmt: skip
    try:
        import json

        for message in messages:
            process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(2)]
        assert '"hello\\n"' in json.dumps(answers[1]), answers[1]
        deadline = time.monotonic() + 10
        while not containers_of(docker_client, process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(containers_of(docker_client, process.pid)) == 1
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        process.stdin.close()
        process.stdout.close()
    assert containers_of(docker_client, process.pid) == []
