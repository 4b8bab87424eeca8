"""/mcp tool calls held to the caller's rate and concurrency limits (see colony.runtime.rate_limits).

/v1/tool_call takes its permit in its handler. An /mcp request is JSON-RPC, so
the tool a ``tools/call`` names is read from the body (already whole, see
body.py) and the permit held while the MCP transport answers it, keyed, like
/v1/tool_call, by the agent of the Principal that McpAuthEndpoint attached.
Over a limit, /mcp answers 429 with ``Retry-After`` and a JSON-RPC error (its
code, and ``retry_after_seconds`` under ``data``), which MCP clients surface as
the call's error.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.errors import RateLimitedError
from colony.runtime.principal import Principal
from colony.runtime.rate_limits import RateLimiter
from colony.runtime.refusals import RefusalRecorder
from colony.surfaces.error_mapping import http_headers, http_status, mcp_error
from colony.surfaces.gateway.refused import Admitted
from colony.surfaces.gateway.replies import send_json
from colony.surfaces.mcp.server import PRINCIPAL_STATE

__all__ = ["McpCallLimits"]


class McpCallLimits:
    """Hold each /mcp ``tools/call`` to its caller's rate and concurrency limits for that tool."""

    def __init__(self, app: ASGIApp, limiter: RateLimiter, refusals: RefusalRecorder) -> None:
        self.app = app
        self.limiter = limiter
        self.refusals = refusals

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get(PRINCIPAL_STATE)
        if scope["type"] != "http" or scope["method"] != "POST" or not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        first = await receive()
        replay: list[Message] = [first]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        call = _tool_call(first.get("body", b"")) if not first.get("more_body") else None
        if call is None:
            await self.app(scope, replayed, send)
            return
        tool, request_id = call
        entered = False
        try:
            async with Admitted(self.limiter, self.refusals, principal, tool):
                entered = True
                await self.app(scope, replayed, send)
        except RateLimitedError as error:
            if entered:
                raise
            data = mcp_error(error).model_dump(mode="json", exclude_none=True)
            body = {"jsonrpc": "2.0", "id": request_id, "error": data}
            await send_json(send, http_status(error), body, headers=http_headers(error))


def _tool_call(raw: bytes) -> tuple[str, Any] | None:
    """The tool a JSON-RPC ``tools/call`` request names, and the request's id; None for anything else."""
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return (name, message.get("id")) if isinstance(name, str) else None
