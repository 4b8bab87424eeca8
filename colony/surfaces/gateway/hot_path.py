"""POST /v1/tool_call answered straight from ASGI: its guards, then the call, in one layer outside the app's stack.

The call is the gateway's hot path, and for a pure tool the layers of a request
(Starlette's server-error and FastAPI's telemetry layers, each guard as its own
middleware, the body replayed to the next layer, a Response object) cost more than
the tool itself. This one layer sits outermost and runs, for that path only, the
same guards in the same order (Host/Origin/Content-Type, then the body within its
size cap and time limit: the guard middlewares' own checks), then the call; the
answer is written as two ASGI messages. Errors are rendered by the app's own
handlers, an unexpected one as the server-error layer does (500, then raised for
the server's log), so the answers are the same as from a route. Every other path
goes to the app, whose middleware applies the same guards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from colony.surfaces.gateway.body import BodyGuardMiddleware
from colony.surfaces.gateway.origins import TransportGuardMiddleware
from colony.surfaces.gateway.replies import encode_json, send_body

__all__ = ["Answer", "HotPath"]


@dataclass(frozen=True, slots=True)
class Answer:
    """A JSON answer: written as a JSONResponse would write it, without building one."""

    content: Any
    status: int = 200
    headers: tuple[tuple[bytes, bytes], ...] = ()


AnswerFunction = Callable[[Headers, bytes], Awaitable[Answer]]
OnError = Callable[[Request, Exception], Awaitable[Response] | None]
OnUnexpected = Callable[[Request, Exception], Awaitable[Response]]


class HotPath:
    """Answers ``method path`` with ``answer(headers, body)`` behind the guards (another method: 405).

    ``on_error`` turns an exception ``answer`` raises into its response (the app's
    exception handlers), or returns None for an unexpected one, which ``on_unexpected``
    answers (500) before it is raised again.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        method: str,
        path: str,
        answer: AnswerFunction,
        on_error: OnError,
        on_unexpected: OnUnexpected,
        transport: TransportGuardMiddleware,
        body: BodyGuardMiddleware,
    ) -> None:
        self.app = app
        self.method = method
        self.path = path
        self.answer = answer
        self.on_error = on_error
        self.on_unexpected = on_unexpected
        self.transport = transport
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        if not await self.transport.admits(scope, send):
            return
        read = await self.body.read(scope, receive, send)
        if read is None:
            return  # answered by the body guard, or the client went away
        try:
            if scope["method"] != self.method:
                raise HTTPException(405, headers={"allow": self.method})
            answer = await self.answer(Headers(scope=scope), read[0] or b"")
            body = encode_json(answer.content)
        except Exception as error:
            request = Request(scope)
            handled = self.on_error(request, error)
            if handled is None:
                await (await self.on_unexpected(request, error))(scope, receive, send)
                raise
            await (await handled)(scope, receive, send)
            return
        await send_body(send, answer.status, body, headers=answer.headers)
