"""The gateway's outermost layer: an HTTP server span per request (when tracing), and every answer's status counted.

The span follows OpenTelemetry's HTTP server conventions (``http.request.method``,
``url.path``, ``http.route``, ``http.response.status_code``) and continues a caller's
``traceparent``. Installed only when tracing or metrics are on, so with both off a
request never passes through it.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.telemetry import metrics
from colony.telemetry.failures import SPAN_OPTIONS, mark_failed
from colony.telemetry.surfaces import extract
from colony.telemetry.tracing import settings, tracer

__all__ = ["HttpTelemetry"]

_KNOWN_PATHS = {"/v1/tool_call", "/mcp", "/v1/catalog", "/health", "/metrics"}


class HttpTelemetry:
    """Wraps an ASGI app: spans and status counts for its HTTP requests."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        active = tracer()
        if active is None:  # counting only

            async def counted(message: Message) -> None:
                if message["type"] == "http.response.start":
                    metrics.count_response(message["status"])
                await send(message)

            await self.app(scope, receive, counted)
            return
        answered: list[int] = []
        counting = settings().metrics

        async def observed(message: Message) -> None:
            if message["type"] == "http.response.start":
                answered.append(message["status"])
                if counting:
                    metrics.count_response(message["status"])
            await send(message)

        await self._traced(active, scope, receive, observed, answered)

    async def _traced(self, active: Any, scope: Scope, receive: Receive, send: Send, answered: list[int]) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope.get("headers", ())}
        method, path = scope["method"], scope["path"]
        values = {"http.request.method": method, "url.path": path, "url.scheme": scope.get("scheme", "http")}
        values["colony.surface"] = "http"
        with active.start_as_current_span(
            method, context=extract(headers), kind=SpanKind.SERVER, attributes=values, **SPAN_OPTIONS
        ) as span:
            try:
                await self.app(scope, receive, send)
            except Exception as error:
                mark_failed(span, error)
                raise
            finally:
                route = _route(scope)
                if route is not None:
                    span.update_name(f"{method} {route}")
                    span.set_attribute("http.route", route)
                if answered:
                    span.set_attribute("http.response.status_code", answered[0])
                    if answered[0] >= 500:
                        span.set_status(Status(StatusCode.ERROR))


def _route(scope: Scope) -> str | None:
    """The route template that answered (never a path with ids in it)."""
    route = scope.get("route")
    if route is not None and isinstance(getattr(route, "path", None), str):
        return str(route.path)
    return scope["path"] if scope["path"] in _KNOWN_PATHS else None
