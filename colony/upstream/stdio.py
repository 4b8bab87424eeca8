"""A stdio transport for upstream servers that bounds each message.

The SDK's stdio client joins a line's chunks again for every chunk it reads, so one
50 MB answer costs minutes of copying while every other call on the session waits.
This transport reads bytes, keeps at most ``max_message_bytes`` of a line, and answers
a request whose response is longer with a JSON-RPC error of its own (the request id is
read from the first or last bytes of the line, where servers write it): the caller gets
a typed error at once and the session keeps serving. The server runs in its own process
group; closing the transport closes its stdin, then terminates and finally kills the
group, so no child outlives the session.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

__all__ = ["OVERSIZED", "bounded_stdio"]

#: ``error.data`` of the JSON-RPC error that stands in for an oversized answer.
OVERSIZED = "colony.upstream.oversized"
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')
_EDGE = 512
_GRACE_SECONDS = 2.0
_running: set[int] = set()  # process groups started and not yet stopped


@atexit.register
def _kill_running() -> None:
    """At exit, the servers no session stopped (a loop that ended first) are killed: no orphans."""
    for group in list(_running):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


@asynccontextmanager
async def bounded_stdio(
    command: str,
    args: list[str],
    *,
    env: dict[str, str] | None,
    cwd: str | None,
    max_message_bytes: int,
    errlog: TextIO = sys.stderr,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and yield the MCP client's (read, write) streams."""
    process = await anyio.open_process(
        [command, *args],
        env=get_default_environment() | (env or {}),
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,
    )
    _running.add(process.pid)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        assert process.stdout is not None
        async with read_writer:
            lines = _Lines(max_message_bytes)
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in process.stdout:
                    for message in lines.feed(chunk):
                        await read_writer.send(message)

    async def write() -> None:
        assert process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
        await read_writer.aclose()  # the server cannot be written to: the session sees it end

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
            tasks.cancel_scope.cancel()


class _Lines:
    """Bytes in, JSON-RPC messages out; a line over the cap becomes an error answer for its request."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.head = b""
        self.tail = b""

    def feed(self, chunk: bytes) -> list[SessionMessage | Exception]:
        messages: list[SessionMessage | Exception] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._take(piece)
            if end < 0:
                return messages
            message = self._finish()
            if message is not None:
                messages.append(message)
            start = end + 1

    def _take(self, piece: bytes) -> None:
        if self.size <= self.limit:
            self.parts.append(piece)
            if self.size + len(piece) > self.limit:
                joined = b"".join(self.parts)
                self.head, self.parts = joined[:_EDGE], []
        self.size += len(piece)
        if self.size > self.limit:
            self.tail = (self.tail + piece)[-_EDGE:]

    def _finish(self) -> SessionMessage | Exception | None:
        size, self.size = self.size, 0
        if size > self.limit:
            head, tail, self.head, self.tail = self.head, self.tail, b"", b""
            return _oversized(head, tail, self.limit)
        line, self.parts = b"".join(self.parts), []
        if not line.strip():
            return None
        try:
            return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as error:
            return error


def _oversized(head: bytes, tail: bytes, limit: int) -> SessionMessage | Exception:
    found = _ID.search(head) or _ID.search(tail)
    message = f"the server answered more than {limit} bytes in one message; the answer was dropped"
    if found is None:
        return ValueError(message)
    raw = found[1].decode("utf-8", "replace")
    request_id: int | str = int(raw) if not raw.startswith('"') else raw[1:-1]
    error = mcp_types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message, data=OVERSIZED),
    )
    return SessionMessage(error)


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, give the server a grace period, then terminate and kill its process group."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    for sent in (None, signal.SIGTERM, signal.SIGKILL):
        if sent is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sent)
        with anyio.move_on_after(_GRACE_SECONDS):
            while process.returncode is None:
                await anyio.sleep(0.02)
        if process.returncode is not None:
            break
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # what the server started and left behind
    _running.discard(process.pid)
    with anyio.move_on_after(_GRACE_SECONDS), contextlib.suppress(OSError, anyio.BrokenResourceError):
        await process.aclose()  # its pipes, and the exit status reaped
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    if transport is not None:
        transport.close()  # asyncio's, which a descendant holding a pipe would otherwise keep open
