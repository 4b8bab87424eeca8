"""/mcp is stateless: it answers POSTs only, so a GET (an event stream it would never send on) gets 405."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from colony.surfaces.gateway.replies import refusal_body, send_json

__all__ = ["StatelessMcpMethods"]


class StatelessMcpMethods:
    """Answer anything but POST on the stateless MCP endpoint with 405 and ``Allow: POST``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "POST":
            await self.app(scope, receive, send)
            return
        message = (
            f"{scope['method']} /mcp: this MCP endpoint is stateless and keeps no sessions or event streams; "
            "send each JSON-RPC message as a POST"
        )
        await send_json(send, 405, refusal_body(message, jsonrpc=True), headers={"allow": "POST"})
