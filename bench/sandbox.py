"""Sandbox call latency: one exec per call (the runner) vs the two-exec protocol vs the docker CLI's exec.

Prints medians and ratios, measured side by side (rounds interleaved, so load on
the machine hits every variant alike):
- cold: a new session's first call (create and start a container, then run);
- warm: a call in the reused container: one ``docker exec`` of the runner, which
  runs the command in its own work directory, kills what it left, collects
  ``out/`` and empties /work and /tmp;
- two execs: the protocol before the runner (the command's exec, then a second
  exec collecting outputs and cleaning up), rebuilt here from the same parts;
- bare SDK exec: the command alone in one exec through the SDK, with nothing
  around it (the floor any call pays);
- ``docker exec``: the same command from the docker CLI, bare, in the same container.

Targets: warm / cold at most 0.2; warm / ``docker exec`` at most 1.1.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable
from typing import Any

import docker

from colony.sandbox.build import build_role_image
from colony.sandbox.config import DEFAULT_ROLES
from colony.sandbox.execution import run_exec
from colony.sandbox.files import OUTPUT_DIR, collect_outputs, pack_call_directory
from colony.sandbox.offload import in_daemon_thread
from colony.sandbox.policy import WORK_ROOT
from tools.shell_exec import ShellExec

COMMAND = ["sh", "-c", "echo hello | tr a-z A-Z"]
ROUNDS = 15
COLD_ROUNDS = 5
LIMIT = 1 << 20

# The clean-up exec of the two-exec protocol, as the session ran it after every call.
_FINISH_COMMAND = [
    "sh",
    "-c",
    "kill -9 -1 2>/dev/null; kill -9 -1 2>/dev/null; "
    '(cd "$0" 2>/dev/null && tar -c . 2>/dev/null); '
    "cd / && rm -rf /work/* /work/.[!.]* /work/..?* /tmp/* /tmp/.[!.]* /tmp/..?* 2>/dev/null; "
    'test -z "$(ls -A /work)" && test -z "$(ls -A /tmp)" && mkdir -m 777 -p "$1"',
]


class TwoExecCalls:
    """Calls made the way the session made them before the runner: the command's exec, then a clean-up exec."""

    def __init__(self, client: Any, container_id: str, user: str) -> None:
        self.api = client.api
        self.container_id = container_id
        self.user = user
        self.ready_dir = uuid.uuid4().hex
        self.api.put_archive(container_id, WORK_ROOT, pack_call_directory(self.ready_dir, {}))

    def call(self, command: list[str]) -> bytes:
        started = time.monotonic()
        self.api.inspect_container(self.container_id)
        call_dir, self.ready_dir = self.ready_dir, uuid.uuid4().hex
        outcome = run_exec(
            self.api,
            self.container_id,
            command,
            stdin=None,
            workdir=f"{WORK_ROOT}/{call_dir}",
            user=self.user,
            environment={"OUT": f"{WORK_ROOT}/{call_dir}/{OUTPUT_DIR}"},
            deadline=started + 30,
            limit_bytes=LIMIT,
        )
        finish = run_exec(
            self.api,
            self.container_id,
            [*_FINISH_COMMAND, f"{WORK_ROOT}/{call_dir}/{OUTPUT_DIR}", f"{WORK_ROOT}/{self.ready_dir}/{OUTPUT_DIR}"],
            stdin=None,
            workdir="/",
            user=self.user,
            environment={},
            deadline=time.monotonic() + 10,
            limit_bytes=2 * LIMIT + (1 << 16),
        )
        assert finish.exit_code == 0, finish
        collect_outputs(bytes(finish.stdout), limit_bytes=LIMIT)
        return bytes(outcome.stdout)


def _cold_call() -> float:
    """A new session's first call (create and start a container, then run); removal is not timed."""
    tool = ShellExec()
    started = time.perf_counter()
    asyncio.run(tool._exec_in_sandbox(COMMAND))
    elapsed = time.perf_counter() - started
    tool.sandbox_session.close()
    return elapsed


def _bare_exec(client: Any, container_id: str, user: str) -> bytes:
    """The command alone in one exec through the SDK: no work directory, no clean-up (the floor)."""
    outcome = run_exec(
        client.api,
        container_id,
        COMMAND,
        stdin=None,
        workdir=WORK_ROOT,
        user=user,
        environment={},
        deadline=time.monotonic() + 30,
        limit_bytes=LIMIT,
    )
    return bytes(outcome.stdout)


def _interleaved_medians(variants: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Each variant once per round, in turn; the median per variant."""
    timings: dict[str, list[float]] = {name: [] for name in variants}
    for round_number in range(rounds):
        for name, run in variants.items():
            if name == "cold" and round_number >= COLD_ROUNDS:
                continue
            started = time.perf_counter()
            value = run()
            timed = time.perf_counter() - started
            timings[name].append(value if name == "cold" and isinstance(value, float) else timed)
    return {name: statistics.median(values) for name, values in timings.items()}


def main() -> None:
    client = docker.from_env()
    role = DEFAULT_ROLES["busybox"]
    build_role_image(client, "busybox", role)

    warm_tool = ShellExec()
    before_tool = ShellExec()
    for tool in (warm_tool, before_tool):
        result = asyncio.run(tool._exec_in_sandbox(COMMAND))
        assert result["stdout"] == "HELLO\n", result
    container_id = warm_tool.sandbox_session.container_id(warm_tool._container_plan())
    before_id = before_tool.sandbox_session.container_id(before_tool._container_plan())
    assert container_id and before_id
    two_execs = TwoExecCalls(client, before_id, role.user)

    variants: dict[str, Callable[[], object]] = {
        "cold": _cold_call,
        "warm": lambda: asyncio.run(warm_tool._exec_in_sandbox(COMMAND)),
        "two execs": lambda: asyncio.run(in_daemon_thread(lambda: two_execs.call(COMMAND))),
        "bare SDK exec": lambda: asyncio.run(in_daemon_thread(lambda: _bare_exec(client, container_id, role.user))),
    }
    cli = shutil.which("docker")
    if cli:
        variants["docker exec"] = lambda: subprocess.run(
            [cli, "exec", "-u", role.user, container_id, *COMMAND], check=True, capture_output=True
        )
    medians = _interleaved_medians(variants, ROUNDS)
    cold, warm, before = medians["cold"], medians["warm"], medians["two execs"]

    print(f"cold call (new container):         {cold * 1000:8.1f} ms")
    print(f"warm call, one exec (runner):      {warm * 1000:8.1f} ms")
    print(f"warm call, two execs (before):     {before * 1000:8.1f} ms")
    print(f"bare exec via the SDK (the floor): {medians['bare SDK exec'] * 1000:8.1f} ms")
    print(f"warm / cold:                       {warm / cold:8.2f}  (target <= 0.20)")
    print(f"two execs / cold:                  {before / cold:8.2f}")
    if cli:
        bare = medians["docker exec"]
        print(f"`docker exec` from the CLI:        {bare * 1000:8.1f} ms")
        print(f"warm / docker exec:                {warm / bare:8.2f}  (target <= 1.10)")
        print(f"two execs / docker exec:           {before / bare:8.2f}")
    else:
        print("docker CLI not found: warm / docker exec not measured")
    warm_tool.sandbox_session.close()
    before_tool.sandbox_session.close()
    client.close()


if __name__ == "__main__":
    main()
