"""ASGI guards in front of the gateway: the body-size cap and the MCP endpoint's authentication."""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.errors import AuthenticationError, ColonyError, PayloadTooLargeError
from colony.surfaces.auth import Authenticator
from colony.surfaces.error_mapping import http_status
from colony.surfaces.mcp_server import PRINCIPAL_STATE

__all__ = ["BodyLimitMiddleware", "McpAuthEndpoint", "send_error"]


async def send_error(
    send: Send, error: ColonyError, *, jsonrpc: bool = False, challenge: str = 'Bearer realm="colony"'
) -> None:
    """Answer with ``error`` as the gateway's JSON error body (or a JSON-RPC error on /mcp)."""
    from colony.surfaces.error_mapping import mcp_error

    body: dict[str, Any] = {"ok": False, "error": error.to_dict()}
    if jsonrpc:
        data = mcp_error(error)
        body = {"jsonrpc": "2.0", "id": None, "error": data.model_dump(mode="json", exclude_none=True)}
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if isinstance(error, AuthenticationError):
        headers.append((b"www-authenticate", challenge.encode()))
    await send({"type": "http.response.start", "status": http_status(error), "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class BodyLimitMiddleware:
    """Refuse a request body over ``max_bytes`` with 413, whether declared (Content-Length) or streamed (chunked)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit():
            # The server delivers exactly the declared length, so the header alone decides.
            if int(declared) > self.max_bytes:
                await send_error(send, self._too_large(int(declared)))
                return
            await self.app(scope, receive, send)
            return
        body = bytearray()
        trailing: list[Message] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                trailing.append(message)
                break
            body.extend(message.get("body", b""))
            if len(body) > self.max_bytes:
                await send_error(send, self._too_large(len(body)))
                return
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}, *trailing]

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)

    def _too_large(self, size: int) -> PayloadTooLargeError:
        return PayloadTooLargeError(f"the request body is {size}+ bytes; this gateway accepts at most {self.max_bytes}")


class McpAuthEndpoint:
    """The /mcp route: authenticate the caller, attach its Principal, then hand over to the MCP transport."""

    def __init__(self, authenticator: Authenticator, app: ASGIApp, challenge: str = 'Bearer realm="colony"') -> None:
        self.authenticator = authenticator
        self.app = app
        self.challenge = challenge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            principal = self.authenticator.authenticate(Headers(scope=scope).get("authorization"))
        except AuthenticationError as error:
            await send_error(send, error, jsonrpc=True, challenge=self.challenge)
            return
        scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.app(scope, receive, send)
