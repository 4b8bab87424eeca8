"""SandboxSession: the containers one owner shares, started lazily and always removed.

A session holds at most one container per ``ContainerPlan`` (role plus limits),
started on the first call that needs it and reused by later ones. Calls on one
container run one at a time, each in its own work directory; afterwards every
process the call left is killed and /work and /tmp are emptied. A command that
runs past its timeout is killed and its container replaced, as is a container
that could not be emptied. ``close()`` removes everything; sessions still open
when the interpreter exits (normally or on Ctrl-C) are closed then, and
containers of a process that died without closing are reaped by the next
session to start one.
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

from colony.sandbox.config import SandboxConfig
from colony.sandbox.docker_errors import DockerCall, docker_errors_translated
from colony.sandbox.execution import ExecOutcome, run_exec
from colony.sandbox.files import OUTPUT_DIR, CollectedFiles, collect_outputs, pack_call_directory
from colony.sandbox.ownership import owner_labels, reap_orphans
from colony.sandbox.policy import WORK_ROOT, ContainerPlan

__all__ = ["SandboxResult", "SandboxSession", "truncation_marker"]

logger = logging.getLogger(__name__)

# Run as the command's user after each call: kill what the call left running (the container's
# main process belongs to another user, so it survives), stream out/ as a tar, empty /work and
# /tmp, and prepare the next call's directory. Exits non-zero if anything could not be removed.
_FINISH_COMMAND = [
    "sh",
    "-c",
    "kill -9 -1 2>/dev/null; kill -9 -1 2>/dev/null; "
    '(cd "$0" 2>/dev/null && tar -c . 2>/dev/null); '
    "cd / && rm -rf /work/* /work/.[!.]* /work/..?* /tmp/* /tmp/.[!.]* /tmp/..?* 2>/dev/null; "
    'test -z "$(ls -A /work)" && test -z "$(ls -A /tmp)" && mkdir -m 777 -p "$1"',
]
_KILL_COMMAND = ["sh", "-c", "kill -9 -1; kill -9 -1; true"]
_FINISH_TIMEOUT_SECONDS = 10.0
_TAR_OVERHEAD_BYTES = 1 << 16


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


def truncation_marker(limit_bytes: int) -> str:
    """The line appended to a stream cut at the output cap."""
    return f"\n[output truncated by the Colony sandbox at {limit_bytes} bytes; the run was stopped]\n"


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
        self._locks: dict[ContainerPlan, threading.Lock] = {}
        self._guard = threading.Lock()
        # Runs on close(), when the session is garbage-collected, or at interpreter exit (Ctrl-C included).
        self._finalizer = weakref.finalize(self, _remove_all, self._held)

    @property
    def config(self) -> SandboxConfig:
        """The role table: the one given, else ``COLONY_SANDBOX_IMAGES`` over the built-in roles."""
        if self._config is None:
            self._config = SandboxConfig.from_env()
        return self._config

    def client(self, call: DockerCall) -> Any:
        """The Docker client, connected on first use."""
        with self._guard:
            if self._held.client is None:
                with docker_errors_translated(call):
                    self._held.client = self._client_factory()
            return self._held.client

    def container_id(self, plan: ContainerPlan) -> str | None:
        """The id of the container serving ``plan``, if one is running."""
        box = self._held.containers.get(plan)
        return box.id if box else None

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
    ) -> SandboxResult:
        """Run ``command`` in the plan's container (started if need be), blocking until it is done."""
        with self._lock_for(plan):
            started = time.monotonic()
            call = DockerCall(plan.role, plan.image, f"running {command[0]!r}")
            client = self.client(call)
            with docker_errors_translated(call):
                box = self._ensure_container(client, plan)
                prepared, box.ready_dir = box.ready_dir, None
                call_dir = prepared or _new_call_dir()
                if files or prepared is None:
                    client.api.put_archive(box.id, WORK_ROOT, pack_call_directory(call_dir, files))
                outcome = run_exec(
                    client.api,
                    box.id,
                    command,
                    stdin=stdin,
                    workdir=f"{WORK_ROOT}/{call_dir}",
                    user=plan.user,
                    environment={"OUT": f"{WORK_ROOT}/{call_dir}/{OUTPUT_DIR}"},
                    deadline=started + timeout_seconds,
                    limit_bytes=limit_bytes,
                    stop=lambda: self._kill_leftovers(client, plan, box),
                )
                collected = None
                if outcome.finished and not outcome.timed_out:
                    collected = self._finish(client, plan, box, call_dir, limit_bytes)
                if collected is None:
                    self._recycle(client, plan)
            return _result(outcome, collected, limit_bytes, time.monotonic() - started)

    def close(self) -> None:
        """Remove every container this session started; safe to call twice."""
        self._finalizer()

    def _lock_for(self, plan: ContainerPlan) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(plan, threading.Lock())

    def _ensure_container(self, client: Any, plan: ContainerPlan) -> _Box:
        box = self._held.containers.get(plan)
        if box is not None:
            if client.api.inspect_container(box.id)["State"].get("Running"):
                return box
            self._recycle(client, plan)
        reap_orphans(client)
        # create + start, never run: run() would try to pull a missing image from a registry.
        container = client.containers.create(labels=owner_labels(plan.role), **plan.create_kwargs())
        container.start()
        box = self._held.containers[plan] = _Box(str(container.id))
        return box

    def _finish(
        self, client: Any, plan: ContainerPlan, box: _Box, call_dir: str, limit_bytes: int
    ) -> CollectedFiles | None:
        """Collect the call's outputs, kill what it left running, empty its directories, prepare the next.

        None when the container could not be cleaned (it must then be replaced).
        """
        next_dir = _new_call_dir()
        outcome = run_exec(
            client.api,
            box.id,
            [*_FINISH_COMMAND, f"{WORK_ROOT}/{call_dir}/{OUTPUT_DIR}", f"{WORK_ROOT}/{next_dir}/{OUTPUT_DIR}"],
            stdin=None,
            workdir="/",
            user=plan.user,
            environment={},
            deadline=time.monotonic() + _FINISH_TIMEOUT_SECONDS,
            limit_bytes=2 * limit_bytes + _TAR_OVERHEAD_BYTES,
        )
        if outcome.exit_code != 0:
            return None
        box.ready_dir = next_dir
        return collect_outputs(bytes(outcome.stdout), limit_bytes=limit_bytes, complete=not outcome.stdout_truncated)

    def _kill_leftovers(self, client: Any, plan: ContainerPlan, box: _Box) -> None:
        """Kill every process of the command's user (the container's main process is another user's)."""
        run_exec(
            client.api,
            box.id,
            _KILL_COMMAND,
            stdin=None,
            workdir="/",
            user=plan.user,
            environment={},
            deadline=time.monotonic() + _FINISH_TIMEOUT_SECONDS,
            limit_bytes=4096,
        )

    def _recycle(self, client: Any, plan: ContainerPlan) -> None:
        box = self._held.containers.pop(plan, None)
        if box is not None:
            _remove(client, box.id)


def _new_call_dir() -> str:
    return uuid.uuid4().hex


@dataclass
class _Box:
    """One running container, and the empty work directory its last clean-up prepared."""

    id: str
    ready_dir: str | None = None


def _remove(client: Any, container_id: str) -> None:
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except docker_errors.NotFound:
        return


@dataclass
class _Held:
    """What a session holds, apart from the session itself, so its finalizer can release it."""

    client: Any = None
    containers: dict[ContainerPlan, _Box] = field(default_factory=dict)


def _remove_all(held: _Held) -> None:
    """Remove a session's containers and close its client.

    An engine that is gone by then is logged, not raised: the next start reaps the containers.
    """
    while held.containers:
        plan, box = held.containers.popitem()
        try:
            _remove(held.client, box.id)
        except (docker_errors.DockerException, OSError) as error:
            logger.warning("could not remove sandbox container for role %r: %s", plan.role, error)
    if held.client is not None:
        held.client.close()
        held.client = None


def _result(outcome: ExecOutcome, collected: Any, limit_bytes: int, duration: float) -> SandboxResult:
    marker = truncation_marker(limit_bytes)
    stdout = outcome.stdout.decode("utf-8", errors="replace") + (marker if outcome.stdout_truncated else "")
    stderr = outcome.stderr.decode("utf-8", errors="replace") + (marker if outcome.stderr_truncated else "")
    return SandboxResult(
        exit_code=outcome.exit_code,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=outcome.stderr_truncated,
        timed_out=outcome.timed_out,
        output_files=collected.files if collected else {},
        output_files_truncated=bool(collected and collected.truncated),
        duration_seconds=round(duration, 4),
    )
