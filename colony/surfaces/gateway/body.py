"""A request's body, read whole before the app runs: within its size cap and its time limit.

A body declared over the cap is refused at once (413) and one streamed past it
as soon as it does. A client that sends its body too slowly is answered 408 and
its connection closed, so slow senders cannot hold connections open; one that
goes away mid-body costs one log line, not a traceback. The app then receives
the body as one message and never waits on the network.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.errors import PayloadTooLargeError
from colony.surfaces.error_mapping import http_status, mcp_error
from colony.surfaces.gateway.replies import refusal_body, send_json

__all__ = ["BodyGuardMiddleware"]

logger = logging.getLogger("colony.gateway")


class BodyGuardMiddleware:
    """Read each request body whole, at most ``max_bytes`` within ``timeout_seconds``, then hand it on.

    The deadline costs a request two dictionary operations, not a timer: one
    sweeper per middleware wakes every ``tick`` seconds while bodies are being
    read and cancels the reads that are late (asyncio, as under uvicorn).
    """

    def __init__(
        self, app: ASGIApp, *, max_bytes: int, timeout_seconds: float, jsonrpc_paths: tuple[str, ...] = ("/mcp",)
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_seconds = timeout_seconds
        self.jsonrpc_paths = jsonrpc_paths
        self.tick = min(1.0, timeout_seconds / 4)
        self._deadlines: dict[asyncio.Task[Any], float] = {}
        self._late: set[asyncio.Task[Any]] = set()
        self._sweeper: asyncio.TimerHandle | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        read = await self.read(scope, receive, send)
        if read is None:
            return
        body, trailing = read
        if body is None:
            await self.app(scope, receive, send)  # no body to wait for
            return
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *trailing]

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)

    async def read(self, scope: Scope, receive: Receive, send: Send) -> tuple[bytes | None, list[Message]] | None:
        """The whole body (None when the request declares none) and any message read after it.

        None when the request was answered here (413 or 408) or its client went away mid-body.
        """
        declared: str | None = None
        chunked = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                declared = value.decode("latin-1").strip()
            elif name == b"transfer-encoding":
                chunked = True
        if not chunked and (declared is None or declared == "0"):
            return None, []
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, send, int(declared))
            return None
        body = bytearray()
        trailing: list[Message] = []
        task = asyncio.current_task()
        assert task is not None
        loop = task.get_loop()  # not get_running_loop(): on Python 3.11 each asks the kernel for the pid
        self._deadlines[task] = loop.time() + self.timeout_seconds
        if self._sweeper is None:
            self._sweeper = loop.call_later(self.tick, self._sweep, loop)
        try:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    trailing.append(message)
                    break
                body.extend(message.get("body", b""))
                if len(body) > self.max_bytes or not message.get("more_body", False):
                    break
        except asyncio.CancelledError:
            if task not in self._late or task.uncancel() > 0:
                raise  # cancelled by someone else (a shutdown), not by the deadline
            logger.warning(
                "%s took over %g s to send the body of %s (%s); answered 408 and closed",
                _client(scope), self.timeout_seconds, _request(scope), _progress(len(body), declared),
            )  # fmt: skip
            late = f"the request body did not arrive within {self.timeout_seconds:g} s"
            await send_json(send, 408, refusal_body(late, jsonrpc=scope["path"] in self.jsonrpc_paths), close=True)
            return None
        finally:
            self._deadlines.pop(task, None)
            self._late.discard(task)
        if len(body) > self.max_bytes:
            await self._too_large(scope, send, len(body))
            return None
        if trailing and trailing[0]["type"] == "http.disconnect":
            logger.warning(
                "%s went away while sending the body of %s (%s)",
                _client(scope), _request(scope), _progress(len(body), declared),
            )  # fmt: skip
            return None
        return bytes(body), trailing

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Cancel the body reads past their deadline; wake again while any read is pending."""
        self._sweeper = None
        now = loop.time()
        for task, deadline in list(self._deadlines.items()):
            if deadline <= now and task not in self._late:
                self._late.add(task)
                task.cancel()
        if self._deadlines:
            self._sweeper = loop.call_later(self.tick, self._sweep, loop)

    async def _too_large(self, scope: Scope, send: Send, size: int) -> None:
        error = PayloadTooLargeError(
            f"the request body is {size}+ bytes; this gateway accepts at most {self.max_bytes}"
        )
        if scope["path"] in self.jsonrpc_paths:
            data = mcp_error(error).model_dump(mode="json", exclude_none=True)
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": data}
        else:
            body = {"ok": False, "error": error.to_dict()}
        await send_json(send, http_status(error), body, close=True)


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return f"client {client[0]}:{client[1]}" if client else "a client"


def _request(scope: Scope) -> str:
    return f"{scope['method']} {scope['path']}"


def _progress(received: int, declared: str | None) -> str:
    return f"{received} of {declared} bytes received" if declared else f"{received} bytes received"
