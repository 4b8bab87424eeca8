"""The gateway's HTTP/1.1 connections: uvicorn's httptools protocol, with a deadline and a cap on request heads.

uvicorn drops a connection that idles after a response, but a client that
trickles a request head (a byte every few seconds) or sends an endless one
holds its connection forever. Here each request head must be complete within
``timeout_keep_alive`` seconds of the connection opening or of the previous
response, and at most ``h11_max_incomplete_event_size`` bytes long (the limit
uvicorn's h11 protocol applies, applied here too); otherwise the client gets
408 or 431 and the connection is closed.

A response's head waits for its first body write (or the event loop's next turn,
for a response that streams) so one write, one system call and one TCP segment
carry both: uvicorn writes them separately, and on the hot path the second write
costs as much as the call.

``server_options(settings)`` gives uvicorn everything it needs for the
gateway: this protocol and its limits, the keep-alive and the connection cap.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

if TYPE_CHECKING:
    from colony.surfaces.gateway.settings import GatewaySettings

__all__ = ["GatewayHttpProtocol", "HeadWithBody", "server_options"]

logger = logging.getLogger("colony.gateway")

DEFAULT_MAX_HEAD_BYTES = 16 * 1024


class GatewayHttpProtocol(HttpToolsProtocol):
    """HttpToolsProtocol whose request heads must arrive in time and within a size cap.

    One watchdog timer per connection, not one per request: a request only
    notes when its head's clock started (``head_started``), and the watchdog,
    waking at most once per timeout, drops a connection whose head is late.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_timeout = float(self.config.timeout_keep_alive)
        self.max_head_bytes = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD_BYTES
        self.head_started: float | None = None  # when the pending head's clock started; None: no head pending
        self.head_bytes = 0
        self.watchdog: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.head_started = self.loop.time()
        self.watchdog = self.loop.call_later(self.head_timeout, self._watch)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.head_started is not None:
            self.head_bytes += len(data)
        super().data_received(data)
        # Bytes counted while a head is still pending after the parser took them were all head.
        if self.head_started is not None and self.head_bytes > self.max_head_bytes and not self.transport.is_closing():
            self._refuse(431, f"request head over {self.max_head_bytes} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.head_started is None:  # a pipelined request begins while another runs
            self.head_started = self.loop.time()

    def on_headers_complete(self) -> None:
        self.head_started = None
        self.head_bytes = 0
        super().on_headers_complete()
        if self.cycle is not None:  # just made for this request; its task has not run yet
            self.cycle.transport = HeadWithBody(self.transport, self.loop)  # type: ignore[assignment]

    def on_response_complete(self) -> None:
        super().on_response_complete()
        idle = self.cycle is None or self.cycle.response_complete  # no pipelined request started or queued
        if idle and self.head_started is None:
            self.head_started = self.loop.time()  # the next head's clock starts now, as keep-alive's does

    def _watch(self) -> None:
        self.watchdog = None
        if self.transport.is_closing():
            return
        waited = 0.0 if self.head_started is None else self.loop.time() - self.head_started
        if waited < self.head_timeout:
            self.watchdog = self.loop.call_later(self.head_timeout - waited, self._watch)
        elif self.head_bytes == 0 and (self.cycle is None or self.cycle.response_complete):
            self.transport.close()  # an idle connection: close it quietly, as keep-alive does
        else:
            self._refuse(408, f"request head not complete within {self.head_timeout:g} s")

    def _refuse(self, status: int, reason: str) -> None:
        client = f"client {self.client[0]}:{self.client[1]}" if self.client else "a client"
        logger.warning("%s: %s (%d bytes received); answered %d and closed", client, reason, self.head_bytes, status)
        phrase = {408: "Request Timeout", 431: "Request Header Fields Too Large"}[status]
        body = json.dumps({"ok": False, "error": {"type": "HTTPError", "message": reason}}).encode()
        head = (
            f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        ).encode()
        self.transport.write(head + body)
        self.transport.close()


class HeadWithBody:
    """One response's transport: its first write (the head) is held until the next write or the loop's next turn."""

    __slots__ = ("_flush", "_held", "_loop", "_started", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._started = False
        self._flush: asyncio.Handle | None = None

    def write(self, data: bytes) -> None:
        """Hold the first write; send it with the second, or alone at the loop's next turn."""
        if not self._started:
            self._started = True
            self._held = data
            self._flush = self._loop.call_soon(self._write_held)
            return
        if self._held is not None:
            data = self._held + data
            self._held = None
            if self._flush is not None:
                self._flush.cancel()
        self._transport.write(data)

    def close(self) -> None:
        """Send what is held, then close."""
        self._write_held()
        self._transport.close()

    def _write_held(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def server_options(settings: GatewaySettings) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` that apply the gateway's connection limits.

    X-Forwarded-* headers are read only from the proxies the operator names: uvicorn would
    otherwise believe them from any loopback client, which could then put any address in
    the audit log. No ``server`` header names what serves the gateway.
    """
    return {
        "http": GatewayHttpProtocol,
        "timeout_keep_alive": settings.header_timeout_seconds,
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "limit_concurrency": settings.max_connections,
        "proxy_headers": bool(settings.trusted_proxies),
        "forwarded_allow_ips": settings.trusted_proxies or None,
        "server_header": False,
    }
