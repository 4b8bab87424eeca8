"""One session per upstream MCP server, shared by every caller, kept alive and bounded.

A server is started (stdio) or connected (HTTP) on the first call, by a supervisor task
that owns the official MCP client for as long as the session lives; callers send their
requests over it side by side. A start has the server's ``start_timeout`` and a call
its ``timeout``, each on its own: a slow start (a loaded machine, a package fetched on
first run) does not eat the first call's time, and a server that hangs costs that
call its timeout, never another caller's. A server that dies (or a
connection that breaks) is restarted on the next call, after a backoff that doubles
from 0.2 s to 10 s while it keeps failing. ``tools/list_changed`` from the server
re-reads its tools and compares them with the pins (``pins.py``): a tool whose
definition changed goes out of service until an operator re-pins it. ``aclose`` stops
the supervisor, which stops the child process: no orphan outlives Colony.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from colony.errors import (
    ColonyError,
    ToolUnavailableError,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamTimeoutError,
    UpstreamToolError,
    UpstreamUnavailableError,
)
from colony.telemetry import metrics
from colony.upstream.config import HttpServer, ServerConfig, StdioServer, catalog_name, resolve_values
from colony.upstream.http_answers import OVERSIZED_ANSWER, CappedAnswers
from colony.upstream.pins import Review, drift_reason
from colony.upstream.stdio import OVERSIZED, bounded_stdio

__all__ = ["UpstreamServer"]

logger = logging.getLogger("colony.upstream")
_BACKOFF_FIRST, _BACKOFF_MAX = 0.2, 10.0
_BROKEN = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError, httpx2.TransportError)


class UpstreamServer:
    """The session with one server, in one event loop."""

    def __init__(
        self, name: str, config: ServerConfig, *, on_listed: Callable[[str, list[dict[str, Any]]], Review]
    ) -> None:
        self.name = name
        self.config = config
        self._on_listed = on_listed
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._broken = asyncio.Event()
        self._closing = False
        self._failure: BaseException | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._supervisor: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        self.starts = 0
        self.out_of_service: frozenset[str] = frozenset()
        self._relisting: asyncio.Task[None] | None = None
        self._relist_again = False
        self.relists = 0

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call ``tool`` on the server; an UpstreamError (typed) when the server, not the caller, fails.

        A tool whose definition drifted from its pin is refused here, once the session is
        connected: a session's start lists the tools and compares them with the pins, so the
        first call after a start (or a restart) meets the same check as every later one.
        """
        timeout = self.config.timeout
        try:
            client = await self._connected()
            if tool in self.out_of_service:
                raise self._drifted(tool)
            async with asyncio.timeout(timeout):  # asyncio's own: a fraction of an anyio cancel scope's cost per call
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            raise UpstreamTimeoutError(
                f"MCP server {self.name!r} did not answer {tool} within {timeout:g} s", server=self.name
            ) from None
        except MCPError as error:
            if error.error.data == OVERSIZED or OVERSIZED_ANSWER in error.error.message:
                raise UpstreamProtocolError(f"MCP server {self.name!r}: {tool}: {error}", server=self.name) from None
            if error.error.code == mcp_types.CONNECTION_CLOSED and str(error).startswith("SSE stream failed"):
                # the HTTP client gave up on this answer alone (an event over the size cap): the session is fine
                raise UpstreamProtocolError(f"MCP server {self.name!r}: {tool}: {error}", server=self.name) from None
            if error.error.code == mcp_types.CONNECTION_CLOSED:
                self._mark_broken(error)
                raise UpstreamUnavailableError(
                    f"MCP server {self.name!r} went away during {tool}: {error}", server=self.name
                ) from None
            raise UpstreamToolError(f"MCP server {self.name!r} refused {tool}: {error}", server=self.name) from None
        except _BROKEN as error:
            self._mark_broken(error)
            raise UpstreamUnavailableError(
                f"MCP server {self.name!r} went away during {tool}: {type(error).__name__}: {error}", server=self.name
            ) from None
        if not isinstance(result, mcp_types.CallToolResult):
            raise UpstreamProtocolError(
                f"MCP server {self.name!r} answered {tool} with no tool result", server=self.name
            )
        return result

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tool definitions as it lists them now (every page)."""
        client = await self._connected()
        with anyio.fail_after(self.config.timeout):
            return await _listed(client, self.name)

    async def aclose(self) -> None:
        """Stop the session and its child process."""
        self._closing = True
        self._broken.set()
        if self._supervisor is not None:
            with contextlib.suppress(BaseException):
                await self._supervisor
            self._supervisor = None

    async def _connected(self) -> Client:
        """The live client; the server started (after its backoff, if it failed) when there is none.

        The wait is bounded by the supervisor, which gives up on a start after ``start_timeout``.
        """
        if self._client is not None and self._ready.is_set() and not self._broken.is_set():
            return self._client
        if self._supervisor is not None and not self._supervisor.done() and self._broken.is_set():
            await asyncio.shield(self._supervisor)  # a broken session is winding down: start afresh after it
        async with self._starting:  # one start however many callers wait for it
            if self._supervisor is None or self._supervisor.done():
                backoff = self._retry_at - time.monotonic()
                if backoff > 0:
                    await anyio.sleep(backoff)  # at most 10 s; the start then has its own deadline
                self._ready.clear()
                self._broken.clear()
                self._supervisor = asyncio.get_running_loop().create_task(self._supervise(), name=f"mcp:{self.name}")
                self.starts += 1
                metrics.upstream_started(self.name)
        ready = asyncio.ensure_future(self._ready.wait())
        done, _ = await asyncio.wait({ready, self._supervisor}, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
        if self._client is None:
            failure = self._failure
            raise UpstreamUnavailableError(
                f"MCP server {self.name!r} could not be started: {_describe(failure)}", server=self.name
            )
        return self._client

    async def _supervise(self) -> None:
        """Own the client from start to stop; record why it ended, for the next call's backoff."""
        connected = False
        start_timeout = self.config.start_timeout
        starting = asyncio.timeout(start_timeout)
        try:
            async with starting, self._client_for() as client:
                self.out_of_service = self._on_listed(self.name, await _listed(client, self.name)).out_of_service
                starting.reschedule(None)  # started: the session lives until it breaks or Colony stops
                self._client, self._failure, self._failures = client, None, 0
                self._ready.set()
                connected = True
                metrics.upstream_connected(self.name, 1)
                await self._broken.wait()
        except TimeoutError as error:  # the start's deadline, or a timeout the transport raised itself
            late = TimeoutError(f"no answer to its MCP handshake within {start_timeout:g} s")
            self._failure = late if starting.expired() else error
        except Exception as error:  # noqa: BLE001 - any failure of the server is the next call's answer
            self._failure = error
        finally:
            self._client = None
            self._ready.clear()
            if connected:
                metrics.upstream_connected(self.name, -1)
        if self._closing:
            return
        self._failures += 1
        self._retry_at = time.monotonic() + min(_BACKOFF_FIRST * 2 ** (self._failures - 1), _BACKOFF_MAX)
        if self._failure is not None:
            logger.warning("MCP server %r stopped: %s", self.name, _describe(self._failure))

    def _client_for(self) -> Client:
        config = self.config
        if isinstance(config, StdioServer):
            stdio = bounded_stdio(
                config.command,
                list(config.args),
                env=resolve_values(self.name, config.env),
                cwd=config.cwd,
                max_message_bytes=config.max_message_bytes,
            )
            return Client(stdio, message_handler=self._on_message, mode="legacy", cache=None)
        assert isinstance(config, HttpServer)
        transport = httpx2.AsyncHTTPTransport(limits=httpx2.Limits(max_connections=config.max_connections))
        http = httpx2.AsyncClient(
            headers=resolve_values(self.name, config.headers),
            timeout=httpx2.Timeout(config.timeout),
            transport=CappedAnswers(transport, config.max_message_bytes),
            follow_redirects=False,
        )
        session = streamable_http_client(config.url, http_client=http, max_sse_event_size=config.max_message_bytes)
        return Client(session, message_handler=self._on_message, mode="legacy", cache=None)

    async def _on_message(self, message: Any) -> None:
        """``tools/list_changed``: one re-read at a time, and at most one more after it.

        Notifications that arrive while the tools are being re-read ask for one re-read after
        it, however many they are: a server sending them in a loop costs one listing at a
        time, never one per notification side by side on the event loop.
        """
        if not isinstance(message, mcp_types.ToolListChangedNotification) or self._client is None:
            return
        if self._relisting is not None and not self._relisting.done():
            self._relist_again = True
            return
        self._relisting = asyncio.get_running_loop().create_task(self._relist(self._client))

    async def _relist(self, client: Client) -> None:
        while True:
            self._relist_again = False
            try:
                with anyio.fail_after(self.config.timeout):
                    self.relists += 1
                    listed = await _listed(client, self.name)
            except (TimeoutError, MCPError, UpstreamProtocolError, *_BROKEN) as error:
                if not (self._closing or self._broken.is_set()):
                    logger.warning("MCP server %r: re-reading its tools failed: %s", self.name, _describe(error))
                return
            self.out_of_service = self._on_listed(self.name, listed).out_of_service
            if not self._relist_again or self._closing or self._broken.is_set():
                return

    def _drifted(self, tool: str) -> ToolUnavailableError:
        name, reason = catalog_name(self.name, tool), drift_reason(self.name)
        return ToolUnavailableError(f"tool {name!r} is out of service: {reason}", tool=name, reason=reason)

    def _mark_broken(self, error: BaseException) -> None:
        self._failure = error
        self._broken.set()


#: A server's whole listing: at most this many tools, of at most this many bytes of JSON together.
MAX_LISTED_TOOLS = 2_000
MAX_LISTING_BYTES = 16 << 20


async def _listed(client: Client, server: str) -> list[dict[str, Any]]:
    """Every page of the server's tools, within the listing's caps (UpstreamProtocolError past them)."""
    tools: list[dict[str, Any]] = []
    size = 0
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever is cut off
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        for tool in page.tools:
            tools.append(tool.model_dump(mode="json", by_alias=True, exclude_none=True))
            size += len(tool.model_dump_json(by_alias=True, exclude_none=True))
        if len(tools) > MAX_LISTED_TOOLS or size > MAX_LISTING_BYTES:
            raise UpstreamProtocolError(
                f"MCP server {server!r} lists over {MAX_LISTED_TOOLS} tools or {MAX_LISTING_BYTES >> 20} MiB of "
                "tool definitions",
                server=server,
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "no reason given"
    if isinstance(error, ColonyError | UpstreamError) or (isinstance(error, TimeoutError) and str(error)):
        return str(error)
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"
