"""One ``docker exec`` in a running container: stdin in, capped stdout/stderr out, a deadline.

Docker has no call to kill an exec: the caller passes ``stop``, which kills the
command's processes from a second exec, and this module drains the stream so
the engine closes the exec cleanly (a container whose exec is still writing into
a closed connection takes the engine tens of seconds to remove). The same stop
runs when the exec passes its deadline, when a stream passes its cap, and when
the caller raises the ``Interrupt`` (it was cancelled).
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from colony.sandbox.interrupt import Interrupt

__all__ = ["ExecOutcome", "run_exec"]

_HEADER = struct.Struct(">BxxxL")  # the engine's multiplexed stream: kind, 3 pad bytes, length
_STDOUT, _STDERR = 1, 2
_SETTLE_SECONDS = 1.0  # how long to wait for an ended stream's exec to report its exit code
_STOP_GRACE_SECONDS = 5.0  # how long a stopped command may take to die


@dataclass
class ExecOutcome:
    """What one exec produced, before it is turned into a tool's result."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    exit_code: int | None = None
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    interrupted: bool = False

    @property
    def finished(self) -> bool:
        """Whether the process ended by itself (so the container is safe to reuse)."""
        return self.exit_code is not None


def run_exec(
    api: Any,
    container_id: str,
    command: list[str],
    *,
    stdin: bytes | None,
    workdir: str,
    user: str,
    environment: dict[str, str],
    deadline: float,
    limit_bytes: int,
    stderr_limit_bytes: int | None = None,
    stop: Callable[[], None] | None = None,
    interrupt: Interrupt | None = None,
) -> ExecOutcome:
    """Run ``command`` and collect its output until it ends.

    Past the deadline, once stdout passes ``limit_bytes`` or stderr passes
    ``stderr_limit_bytes`` (default: the same), or when ``interrupt`` is raised,
    ``stop`` is called (it kills the command) and the rest of the stream is
    drained unread, so the engine can close the exec cleanly. Without ``stop``,
    reading simply ends there.
    """
    exec_id = api.exec_create(
        container_id,
        command,
        stdin=stdin is not None,
        workdir=workdir,
        user=user,
        environment=environment,
    )["Id"]
    response = api.exec_start(exec_id, socket=True)
    connection: socket.socket = getattr(response, "_sock", response)
    outcome = ExecOutcome()
    if stdin is not None:
        threading.Thread(target=_feed, args=(connection, stdin), daemon=True).start()
    try:
        limits = {_STDOUT: limit_bytes, _STDERR: limit_bytes if stderr_limit_bytes is None else stderr_limit_bytes}
        ended = _read_frames(connection, outcome, deadline, limits, interrupt)
        if not ended and stop is not None:
            # Keep reading while stopping: an exec whose output nobody reads stalls the engine's other execs.
            stopper = threading.Thread(target=stop, daemon=True)
            stopper.start()
            ended = _drain(connection, time.monotonic() + _STOP_GRACE_SECONDS)
            stopper.join(_STOP_GRACE_SECONDS)
    finally:
        _close(response, connection)
    if ended or not (outcome.timed_out or outcome.interrupted):
        outcome.exit_code = _exit_code(api, exec_id, settle=_SETTLE_SECONDS)
    return outcome


def _close(response: Any, connection: socket.socket) -> None:
    """Close the hijacked connection and every file object the SDK layered over it."""
    for stream in (getattr(response, "_response", None), response, connection):
        if stream is not None:
            stream.close()


def _feed(connection: socket.socket, data: bytes) -> None:
    """Write stdin, then half-close so the process sees end of input."""
    try:
        connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)
    except OSError:
        return  # the process exited or was killed before reading it all, which is its business


def _wait_readable(connection: socket.socket, deadline: float, interrupt: Interrupt | None = None) -> bytes | None:
    """The next chunk (b"" at end of stream), or None once the deadline passes or the interrupt is raised."""
    waiting_on: list[Any] = [connection] if interrupt is None else [connection, interrupt]
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or (interrupt is not None and interrupt.is_set()):
            return None
        ready, _, _ = select.select(waiting_on, [], [], remaining)
        if connection in ready:
            return connection.recv(1 << 16)


def _read_frames(
    connection: socket.socket,
    outcome: ExecOutcome,
    deadline: float,
    limits: dict[int, int],
    interrupt: Interrupt | None,
) -> bool:
    """Fill ``outcome`` from the stream; True when it ended, False when stopped early."""
    buffer = bytearray()
    while True:
        chunk = _wait_readable(connection, deadline, interrupt)
        if chunk is None:
            if interrupt is not None and interrupt.is_set():
                outcome.interrupted = True
            else:
                outcome.timed_out = True
            return False
        if not chunk:
            return True
        buffer += chunk
        while len(buffer) >= _HEADER.size:
            kind, size = _HEADER.unpack_from(buffer)
            if len(buffer) < _HEADER.size + size:
                break
            payload = bytes(buffer[_HEADER.size : _HEADER.size + size])
            del buffer[: _HEADER.size + size]
            if not _keep(outcome, kind, payload, limits.get(kind, limits[_STDOUT])):
                return False


def _drain(connection: socket.socket, deadline: float) -> bool:
    """Read and drop the rest of the stream; True if it ended before the deadline."""
    while True:
        chunk = _wait_readable(connection, deadline)
        if not chunk:
            return chunk is not None


def _keep(outcome: ExecOutcome, kind: int, payload: bytes, limit: int) -> bool:
    """Append one frame to its stream; False once a stream passes the cap."""
    target = outcome.stderr if kind == _STDERR else outcome.stdout
    room = limit - len(target)
    target += payload[: max(room, 0)]
    if len(payload) <= room:
        return True
    if kind == _STDERR:
        outcome.stderr_truncated = True
    else:
        outcome.stdout_truncated = True
    return False


def _exit_code(api: Any, exec_id: str, *, settle: float) -> int | None:
    """The exec's exit code, waiting up to ``settle`` seconds for it to end; None if it has not."""
    give_up = time.monotonic() + settle
    while True:
        state = api.exec_inspect(exec_id)
        if not state.get("Running") and state.get("ExitCode") is not None:
            return int(state["ExitCode"])
        if time.monotonic() >= give_up:
            return None
        time.sleep(0.02)
