"""Telling an open MCP session that the tool list changed (``notifications/tools/list_changed``).

The protocol has two eras and each hears of a change its own way: a 2025
handshake session is sent the notification on its connection (the session is
remembered when it makes a request), and a 2026-07-28 client opens a
``subscriptions/listen`` stream, on which the change is published. ``colony
mcp`` serves one connection over stdio, so one remembered session is enough.
The gateway's stateless ``/mcp`` keeps no session to notify: it re-reads the
catalog for every request instead.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["ToolListNotifier"]


class ToolListNotifier:
    """Sends ``tools/list_changed`` to the session of a one-connection server (stdio)."""

    def __init__(self) -> None:
        self._bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self._bus, max_subscriptions=16)
        self._session: ServerSession | None = None

    def remember(self, ctx: ServerRequestContext[Any]) -> None:
        """Keep a handshake-era session to notify later (a 2026 client listens instead)."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._session = ctx.session

    async def tools_changed(self) -> None:
        """Tell the client: on its listen streams, and on its connection if it is a handshake session."""
        await self._bus.publish(ToolsListChanged())
        if self._session is not None:
            try:
                await self._session.send_tool_list_changed()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._session = None  # the client has gone; the server ends with its stream
