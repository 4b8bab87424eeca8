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

Each client address holds at most its share of the connection cap (see
shares.py): a connection past it is not counted against the cap, and its request
is answered 429 with ``Retry-After`` as soon as its head is complete.

``server_options(settings)`` gives uvicorn everything it needs for the
gateway: this protocol and its limits, the keep-alive, the connection cap and
each client's share of it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from colony.errors import RateLimitedError
from colony.surfaces.gateway.shares import ClientShares

if TYPE_CHECKING:
    from colony.surfaces.gateway.settings import GatewaySettings

__all__ = ["GatewayHttpProtocol", "HeadWithBody", "WorkerHttpProtocol", "server_options", "share_worker_connections"]

logger = logging.getLogger("colony.gateway")

DEFAULT_MAX_HEAD_BYTES = 16 * 1024
RETRY_AFTER_SECONDS = 1  # a connection past its client's share: one of the client's own ends at no known time
_PHRASES = {408: "Request Timeout", 429: "Too Many Requests", 431: "Request Header Fields Too Large"}


class GatewayHttpProtocol(HttpToolsProtocol):
    """HttpToolsProtocol whose request heads must arrive in time and within a size cap.

    One watchdog timer per connection, not one per request: a request only
    notes when its head's clock started (``head_started``), and the watchdog,
    waking at most once per timeout, drops a connection whose head is late.

    ``shares`` (a subclass's, see ``server_options``) counts each client's connections.
    """

    shares: ClientShares | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.head_timeout = float(self.config.timeout_keep_alive)
        self.max_head_bytes = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD_BYTES
        self.head_started: float | None = None  # when the pending head's clock started; None: no head pending
        self.head_bytes = 0
        self.watchdog: asyncio.TimerHandle | None = None
        self.counted: str | None = None  # the client address whose share this connection takes
        self.over_share: bytearray | None = None  # past its client's share: the head received so far

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.head_started = self.loop.time()
        self.watchdog = self.loop.call_later(self.head_timeout, self._watch)
        if self.shares is not None and self.client is not None:
            taken = self.shares.take(self.client[0])
            if taken:
                self.counted = self.client[0]
            elif taken is False:
                self.connections.discard(self)  # not counted against the cap: it is only ever refused
                self.over_share = bytearray()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        if self.counted is not None and self.shares is not None:
            self.shares.give(self.counted)
            self.counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.over_share is not None:
            self._past_share(data)
            return
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

    def _past_share(self, data: bytes) -> None:
        """A connection past its client's share: read its head, then answer 429 and close."""
        if self.transport.is_closing() or self.over_share is None:
            return
        self.over_share += data
        self.head_bytes = len(self.over_share)
        if b"\r\n\r\n" in self.over_share:
            share = self.shares.share if self.shares is not None else 0
            retry = RETRY_AFTER_SECONDS
            error = RateLimitedError(
                f"client {self.client[0] if self.client else '?'} already holds {share} connections, its share "
                "of this gateway; close one or retry later",
                retry_after_seconds=retry,
            )
            self._write_closing(429, error.to_dict(), ((b"retry-after", str(retry).encode()),))
        elif self.head_bytes > self.max_head_bytes:
            self._refuse(431, f"request head over {self.max_head_bytes} bytes")

    def _refuse(self, status: int, reason: str) -> None:
        client = f"client {self.client[0]}:{self.client[1]}" if self.client else "a client"
        logger.warning("%s: %s (%d bytes received); answered %d and closed", client, reason, self.head_bytes, status)
        self._write_closing(status, {"type": "HTTPError", "message": reason})

    def _write_closing(self, status: int, error: dict[str, Any], headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        """Answer ``status`` with ``error`` as the gateway's JSON error body, and close the connection."""
        body = json.dumps({"ok": False, "error": error}).encode()
        extra = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
        head = (
            f"HTTP/1.1 {status} {_PHRASES[status]}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n"
        ).encode()
        self.transport.write(head + extra + b"\r\n" + body)
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


class WorkerHttpProtocol(GatewayHttpProtocol):
    """The protocol of a ``--workers N`` process, named by import string.

    A class built at run time cannot be pickled to a spawned worker;
    ``share_worker_connections`` gives this one that process's shares.
    """


def share_worker_connections(settings: GatewaySettings) -> None:
    """Count this worker process's connections per client address, as ``server_options`` does for one process."""
    WorkerHttpProtocol.shares = ClientShares(settings.client_share, settings.trusted_proxies)


def server_options(settings: GatewaySettings, *, workers: bool = False) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` that apply the gateway's connection limits.

    X-Forwarded-* headers are read only from the proxies the operator names: uvicorn would
    otherwise believe them from any loopback client, which could then put any address in
    the audit log. No ``server`` header names what serves the gateway. The protocol is a
    subclass of its own, counting this server's connections per client address; with
    ``workers`` it is named by import string, and each worker's app factory gives it shares.
    """
    if workers:
        protocol: type[GatewayHttpProtocol] | str = f"{__name__}:{WorkerHttpProtocol.__name__}"
    else:
        shares = ClientShares(settings.client_share, settings.trusted_proxies)
        protocol = type("GatewayHttpProtocol", (GatewayHttpProtocol,), {"shares": shares})
    return {
        "http": protocol,
        "timeout_keep_alive": settings.header_timeout_seconds,
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "limit_concurrency": settings.max_connections,
        "proxy_headers": bool(settings.trusted_proxies),
        "forwarded_allow_ips": settings.trusted_proxies or None,
        "server_header": False,
    }
