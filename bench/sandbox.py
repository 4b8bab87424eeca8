"""Sandbox call latency: warm (reused container) vs cold (new container) vs the docker CLI's exec.

Prints medians over a few runs and two ratios:
- warm / cold: what reusing the container saves (target: at most 0.3);
- warm / `docker exec`: a warm sandbox call, with its per-call work directory,
  clean-up and output collection, against a bare `docker exec` of the same
  command from the CLI in a container started the same way.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable

import docker

from colony.sandbox.build import build_role_image
from colony.sandbox.config import DEFAULT_ROLES
from tools.shell_exec import ShellExec

COMMAND = ["sh", "-c", "echo hello | tr a-z A-Z"]
ROUNDS = 7


def _median_seconds(run: Callable[[], object], rounds: int = ROUNDS) -> float:
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def _cold_seconds(rounds: int) -> float:
    """A new session's first call (create and start a container, then run); removal is not timed."""
    timings = []
    for _ in range(rounds):
        tool = ShellExec()
        started = time.perf_counter()
        asyncio.run(tool._exec_in_sandbox(COMMAND))
        timings.append(time.perf_counter() - started)
        tool.sandbox_session.close()
    return statistics.median(timings)


def main() -> None:
    client = docker.from_env()
    role = DEFAULT_ROLES["busybox"]
    build_role_image(client, "busybox", role)

    cold = _cold_seconds(rounds=5)

    warm_tool = ShellExec()
    asyncio.run(warm_tool._exec_in_sandbox(COMMAND))
    warm = _median_seconds(lambda: asyncio.run(warm_tool._exec_in_sandbox(COMMAND)))
    container_id = warm_tool.sandbox_session.container_id(warm_tool._container_plan())

    cli = shutil.which("docker")
    print(f"cold call (new container):   {cold * 1000:8.1f} ms")
    print(f"warm call (reused container):{warm * 1000:8.1f} ms")
    print(f"warm / cold:                 {warm / cold:8.2f}  (target <= 0.30)")
    if cli and container_id:
        exec_cli = _median_seconds(
            lambda: subprocess.run(
                [cli, "exec", "-u", "65534:65534", container_id, *COMMAND], check=True, capture_output=True
            )
        )
        print(f"`docker exec` from the CLI:  {exec_cli * 1000:8.1f} ms")
        print(f"warm / docker exec:          {warm / exec_cli:8.2f}")
    else:
        print("docker CLI not found: warm / docker exec not measured")
    warm_tool.sandbox_session.close()
    client.close()


if __name__ == "__main__":
    main()
