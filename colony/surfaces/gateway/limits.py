"""The MCP endpoint's authentication and its refusals' HTTP status, and the gateway's errors written to ASGI.

Per-caller limits are a step of every call (colony.runtime.steps), /mcp's included: the MCP
server answers a call over them with a JSON-RPC error and leaves the refusal in the
request's state, and McpAuthEndpoint gives that answer the status the gateway gives it on
/v1/tool_call (429 with ``Retry-After``), so MCP clients and plain HTTP clients see it alike.
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.errors import AuthenticationError, ColonyError
from colony.surfaces.auth import Authenticator, principal_of
from colony.surfaces.error_mapping import http_headers, http_status
from colony.surfaces.gateway.replies import send_json
from colony.surfaces.mcp.server import PRINCIPAL_STATE, REFUSAL_STATE

__all__ = ["McpAuthEndpoint", "send_error"]


async def send_error(
    send: Send, error: ColonyError, *, jsonrpc: bool = False, challenge: str = 'Bearer realm="colony"'
) -> None:
    """Answer with ``error`` as the gateway's JSON error body (or a JSON-RPC error on /mcp)."""
    from colony.surfaces.error_mapping import mcp_error

    body: dict[str, Any] = {"ok": False, "error": error.to_dict()}
    if jsonrpc:
        data = mcp_error(error)
        body = {"jsonrpc": "2.0", "id": None, "error": data.model_dump(mode="json", exclude_none=True)}
    headers = {"www-authenticate": challenge} if isinstance(error, AuthenticationError) else {}
    await send_json(send, http_status(error), body, headers=headers)


class McpAuthEndpoint:
    """The /mcp route: authenticate the caller, attach its Principal, then hand over to the MCP transport."""

    def __init__(self, authenticator: Authenticator, app: ASGIApp, challenge: str = 'Bearer realm="colony"') -> None:
        self.authenticator = authenticator
        self.app = app
        self.challenge = challenge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            principal = await principal_of(self.authenticator, Headers(scope=scope).get("authorization"))
        except AuthenticationError as error:
            await send_error(send, error, jsonrpc=True, challenge=self.challenge)
            return
        state = scope.setdefault("state", {})
        state[PRINCIPAL_STATE] = principal

        async def answered(message: Message) -> None:
            refusal = state.get(REFUSAL_STATE)
            if message["type"] == "http.response.start" and isinstance(refusal, ColonyError):
                extra = [
                    (name.encode("latin-1"), value.encode("latin-1")) for name, value in http_headers(refusal).items()
                ]
                message = {**message, "status": http_status(refusal), "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, answered)
