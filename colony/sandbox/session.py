"""SandboxSession: the containers one owner shares, started lazily and always removed.

A session lends each call a container of its ``ContainerPlan`` (role plus
limits) from a ``ContainerPool``: started on the first call that needs it,
reused by later ones, and a second one started only while the first is busy.
A call is one ``docker exec`` of the runner (``colony.sandbox.runner``): the
command runs in its own work directory, then every process it left is killed,
its ``out/`` files are collected and /work and /tmp are emptied, all in that
exec. A command that runs past its timeout, is stopped at the output cap or
interrupted (its caller was cancelled) is killed and its container replaced,
as is a container the runner could not empty. ``close()`` removes everything;
sessions still open when the interpreter exits (normally or on Ctrl-C) are
closed then, and containers of a process that died without closing are reaped
by the next session to start one.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import docker
from docker import errors as docker_errors
from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from colony.sandbox.config import SandboxConfig, default_config
from colony.sandbox.docker_errors import DockerCall, docker_errors_translated
from colony.sandbox.execution import ExecOutcome, run_exec
from colony.sandbox.files import OUTPUT_DIR, CollectedFiles, collect_outputs, pack_call_directory
from colony.sandbox.interrupt import Interrupt
from colony.sandbox.policy import WORK_ROOT, ContainerPlan
from colony.sandbox.pool import Box, ContainerPool
from colony.sandbox.runner import RunnerReport, archive_budget, read_report, report_overhead, runner_command
from colony.telemetry import note_execution

__all__ = ["SandboxResult", "SandboxSession", "truncation_marker"]

logger = logging.getLogger(__name__)

# Run as the command's user when a call must be stopped (timeout, output cap, interrupt): kill every
# process of that user, the runner included; the container is then replaced.
_KILL_COMMAND = ["sh", "-c", "kill -9 -1; kill -9 -1; true"]
_KILL_TIMEOUT_SECONDS = 10.0


@with_config(ConfigDict(extra="forbid"))
class SandboxResult(TypedDict):
    """What a command in the sandbox did. A non-zero exit is a result, not an error."""

    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    output_files: dict[str, str]
    output_files_truncated: bool
    duration_seconds: float


def truncation_marker(limit_bytes: int, *, stopped: bool = True) -> str:
    """The line appended to a stream cut at the output cap (``stopped``: the run was killed for it)."""
    tail = "; the run was stopped" if stopped else ""
    return f"\n[output truncated by the Colony sandbox at {limit_bytes} bytes{tail}]\n"


class SandboxSession:
    """Lazily started, reused, always removed sandbox containers for one owner."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        client_factory: Callable[[], Any] = docker.from_env,
    ) -> None:
        self._config = config
        self._client_factory = client_factory
        self._held = _Held()
        self._guard = threading.Lock()
        # Runs on close(), when the session is garbage-collected, or at interpreter exit (Ctrl-C included).
        self._finalizer = weakref.finalize(self, _remove_all, self._held)

    @property
    def config(self) -> SandboxConfig:
        """The role table: the one given, else the process's (``default_config``)."""
        if self._config is None:
            self._config = default_config()
        return self._config

    def client(self, call: DockerCall) -> Any:
        """The Docker client, connected on first use."""
        with self._guard:
            if self._held.client is None:
                with docker_errors_translated(call):
                    self._held.client = self._client_factory()
            return self._held.client

    def container_id(self, plan: ContainerPlan) -> str | None:
        """The id of the container the next call of ``plan`` would run in, if one is running."""
        return self._held.pool.newest(plan)

    def container_ids(self, plan: ContainerPlan) -> list[str]:
        """The ids of every running container of ``plan`` (more than one while calls overlap)."""
        return self._held.pool.ids(plan)

    def image_present(self, plan: ContainerPlan) -> bool:
        """Whether the plan's image is on the engine (a SandboxError if no engine answers)."""
        call = DockerCall(plan.role, plan.image, "looking up the image")
        client = self.client(call)
        with docker_errors_translated(call):
            try:
                client.images.get(plan.image)
            except docker_errors.ImageNotFound:
                return False
        return True

    def run(
        self,
        plan: ContainerPlan,
        command: list[str],
        *,
        stdin: bytes | None,
        files: Mapping[str, bytes],
        timeout_seconds: float,
        limit_bytes: int,
        interrupt: Interrupt | None = None,
        caller: str | None = None,
    ) -> SandboxResult:
        """Run ``command`` in a container of the plan (started if need be), blocking until it is done.

        ``timeout_seconds`` covers waiting for a free container as well as the run; ``caller``
        (the principal, None outside a call) gets its share of the plan's containers.
        Raising ``interrupt`` (from another thread) stops the call as a timeout would.
        """
        started = time.monotonic()
        deadline = started + timeout_seconds
        call = DockerCall(plan.role, plan.image, f"running {command[0]!r}")
        client = self.client(call)
        with docker_errors_translated(call):
            box = self._held.pool.acquire(client, plan, deadline=deadline, interrupt=interrupt, caller=caller)
            note_execution({"colony.sandbox.container_id": box.id, "colony.sandbox.role": plan.role})
            healthy = False
            try:
                outcome, report = self._call(client, plan, box, command, stdin, files, deadline, limit_bytes, interrupt)
                healthy = report is not None and report.clean
            finally:
                self._held.pool.release(client, plan, box, healthy=healthy)
        return _result(outcome, report, limit_bytes, time.monotonic() - started)

    def close(self) -> None:
        """Remove every container this session started; safe to call twice."""
        self._finalizer()

    def _call(
        self,
        client: Any,
        plan: ContainerPlan,
        box: Box,
        command: list[str],
        stdin: bytes | None,
        files: Mapping[str, bytes],
        deadline: float,
        limit_bytes: int,
        interrupt: Interrupt | None,
    ) -> tuple[ExecOutcome, RunnerReport | None]:
        """One exec of the runner in ``box``; its outcome and the runner's report (None: replace the container)."""
        name = uuid.uuid4().hex
        call_dir = f"{WORK_ROOT}/{name}"
        if files:  # the archive creates the directory; without files the runner makes it
            client.api.put_archive(box.id, WORK_ROOT, pack_call_directory(name, files))
        budget = archive_budget(limit_bytes)
        outcome = run_exec(
            client.api,
            box.id,
            runner_command(call_dir, command, archive_bytes=budget),
            stdin=stdin,
            workdir=WORK_ROOT,
            user=plan.user,
            environment={"OUT": f"{call_dir}/{OUTPUT_DIR}"},
            deadline=deadline,
            limit_bytes=limit_bytes,
            stderr_limit_bytes=limit_bytes + report_overhead(limit_bytes),
            stop=lambda: _kill_everything(client, plan, box),
            interrupt=interrupt,
        )
        if outcome.timed_out or outcome.interrupted or outcome.stdout_truncated or outcome.stderr_truncated:
            return outcome, None
        return outcome, read_report(bytes(outcome.stderr), outcome.exit_code, archive_bytes=budget)


def _kill_everything(client: Any, plan: ContainerPlan, box: Box) -> None:
    """Kill every process of the command's user (the container's main process is another user's)."""
    run_exec(
        client.api,
        box.id,
        _KILL_COMMAND,
        stdin=None,
        workdir="/",
        user=plan.user,
        environment={},
        deadline=time.monotonic() + _KILL_TIMEOUT_SECONDS,
        limit_bytes=4096,
    )


@dataclass
class _Held:
    """What a session holds, apart from the session itself, so its finalizer can release it."""

    client: Any = None
    pool: ContainerPool = field(default_factory=ContainerPool)


def _remove_all(held: _Held) -> None:
    """Remove a session's containers and close its client.

    An engine that is gone by then is logged, not raised: the next start reaps the containers.
    """
    if held.client is None:
        return
    held.pool.remove_all(
        held.client,
        on_error=lambda plan, error: logger.warning(
            "could not remove sandbox container for role %r: %s", plan.role, error
        ),
    )
    held.client.close()
    held.client = None


def _result(outcome: ExecOutcome, report: RunnerReport | None, limit_bytes: int, duration: float) -> SandboxResult:
    collected: CollectedFiles | None = None
    if report is None:  # stopped, or the runner did not finish: the whole stderr stream is the command's
        exit_code, stderr = outcome.exit_code, bytes(outcome.stderr)
    else:
        exit_code, stderr = report.exit_code, report.stderr
        if report.archive:
            collected = collect_outputs(report.archive, limit_bytes=limit_bytes, complete=report.archive_complete)
    stderr_truncated = outcome.stderr_truncated or len(stderr) > limit_bytes
    return SandboxResult(
        exit_code=exit_code,
        stdout=_text(bytes(outcome.stdout), limit_bytes, cut=outcome.stdout_truncated, stopped=True),
        stderr=_text(stderr, limit_bytes, cut=stderr_truncated, stopped=outcome.stderr_truncated),
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=stderr_truncated,
        timed_out=outcome.timed_out or outcome.interrupted,
        output_files=collected.files if collected else {},
        output_files_truncated=bool(collected and collected.truncated),
        duration_seconds=round(duration, 4),
    )


def _text(stream: bytes, limit_bytes: int, *, cut: bool, stopped: bool) -> str:
    text = stream[:limit_bytes].decode("utf-8", errors="replace")
    return text + truncation_marker(limit_bytes, stopped=stopped) if cut else text
