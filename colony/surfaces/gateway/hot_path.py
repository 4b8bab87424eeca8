"""POST /v1/tool_call answered straight from ASGI, inside the gateway's guards and before FastAPI's stack.

The call is the gateway's hot path, and for a pure tool FastAPI's per-request
machinery (its exception middleware, exit stack, router and Request object) cost
more than the tool itself. Every guard still runs first (Host/Origin, body size and
time, content type: they are the middleware around this one), and errors are
rendered by the app's own handlers, so the answers are the same as from a route.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HotPath", "read_body"]

Answer = Callable[[Headers, bytes], Awaitable[Response]]
OnError = Callable[[Request, Exception], Awaitable[Response] | None]


class HotPath:
    """Answers ``method path`` with ``answer(headers, body)`` (another method on it: 405); anything else goes on.

    ``on_error`` turns an exception ``answer`` raises into its response (the app's
    exception handlers), or returns None to let it propagate (an unexpected error
    reaches the server-error handler as from any route).
    """

    def __init__(self, app: ASGIApp, *, method: str, path: str, answer: Answer, on_error: OnError) -> None:
        self.app = app
        self.method = method
        self.path = path
        self.answer = answer
        self.on_error = on_error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        try:
            if scope["method"] != self.method:
                raise HTTPException(405, headers={"allow": self.method})
            response = await self.answer(Headers(scope=scope), await read_body(receive))
        except Exception as error:
            handled = self.on_error(Request(scope), error)
            if handled is None:
                raise
            response = await handled
        await response(scope, receive, send)


async def read_body(receive: Receive) -> bytes:
    """The request's body (whole already, from the body guard: usually one message)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)
