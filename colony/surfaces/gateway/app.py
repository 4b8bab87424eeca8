"""The HTTP gateway wired together: one FastAPI app with its guards, the hot path, /mcp and the routes.

What each part answers is in routes.py (the tool call, health, the catalog, errors),
approvals.py and openapi.py; this module builds the runtime, the MCP server and the
router, and puts each layer in its place.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import httpx
from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import ASGIApp

from colony.api_docs import serve_docs
from colony.runtime import Catalog, KernelProvider, Runtime
from colony.surfaces.gateway.approvals import approval_routes
from colony.surfaces.gateway.body import BodyGuardMiddleware
from colony.surfaces.gateway.hot_path import HotPath
from colony.surfaces.gateway.jsonrpc import JsonRpcGuard
from colony.surfaces.gateway.limits import McpAuthEndpoint
from colony.surfaces.gateway.mcp_methods import StatelessMcpMethods
from colony.surfaces.gateway.metrics import metrics_routes
from colony.surfaces.gateway.openapi import document_tool_call
from colony.surfaces.gateway.origins import OriginPolicy, TransportGuardMiddleware
from colony.surfaces.gateway.refused import CountUnauthenticated
from colony.surfaces.gateway.resource import metadata_url, resource_routes
from colony.surfaces.gateway.routes import catalog_routes, error_handlers, tool_call
from colony.surfaces.gateway.routing import Router
from colony.surfaces.gateway.settings import GatewaySettings
from colony.surfaces.gateway.shares import PrincipalWaits
from colony.surfaces.mcp.server import build_mcp_server
from colony.telemetry import settings as telemetry_settings
from colony.telemetry import shutdown as stop_tracing
from colony.telemetry.asgi import HttpTelemetry

if TYPE_CHECKING:
    from colony.kernel import KernelSettings
    from colony.policy import PolicySettings
    from colony.upstream import UpstreamSource

__all__ = ["create_app"]


def create_app(
    settings: GatewaySettings | None = None,
    runtime: Runtime | None = None,
    *,
    kernel_settings: KernelSettings | None = None,
    upstream: UpstreamSource | None = None,
    policies: PolicySettings | None = None,
) -> FastAPI:
    """The gateway app; ``settings`` default to the environment's, ``runtime`` to one the app owns.

    A runtime the app creates (and so its tool instances, sandbox containers included) is
    shut down with the app; one passed in belongs to the caller, and so do its limits. The app's
    own runtime builds its kernel from ``kernel_settings`` (default: ``COLONY_*``), mounts the MCP
    servers of ``upstream`` (default: the Colony home's file), decides with the Cedar policies of
    ``policies`` (default: ``COLONY_POLICIES``) and holds calls to ``settings.rate_limits``.
    """
    settings = settings or GatewaySettings.from_env()
    settings.check_safe()
    owned = runtime is None
    runtime = runtime or Runtime(
        Catalog(upstream=upstream) if upstream is not None else None,
        kernels=KernelProvider(settings=kernel_settings),
        timeout_seconds=settings.call_timeout_seconds,
        max_argument_bytes=settings.max_argument_bytes,
        isolate_cpu_bound=True,
        rate_limits=settings.rate_limits,
        policies=policies,
    )
    authenticator = settings.authenticator()
    challenge = 'Bearer realm="colony"'
    if settings.uses_jwt and settings.jwt_audience:
        metadata = metadata_url(settings.jwt_audience)
        challenge = f'Bearer realm="colony", resource_metadata="{metadata}"'
    manager = StreamableHTTPSessionManager(
        app=build_mcp_server(runtime),
        json_response=True,
        stateless=True,
        security_settings=_transport_security(settings),
        max_request_body_size=settings.max_body_bytes,
    )
    http = httpx.AsyncClient()
    router = Router(runtime, settings, http)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            async with manager.run(), anyio.create_task_group() as group:
                group.start_soon(runtime.watch_catalog)  # a removed tool's instance is shut down promptly
                group.start_soon(runtime.refusals.run)  # refused calls reach the audit log within a second
                yield
                group.cancel_scope.cancel()
        finally:
            await http.aclose()
            if owned:
                await runtime.aclose()
                stop_tracing()  # what is batched is exported before the process goes

    app = _Gateway(
        title="Colony gateway",
        summary="Colony's tools over HTTP and MCP, behind capability tokens.",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    serve_docs(app)
    errors = error_handlers(app, challenge)
    answer = tool_call(router, authenticator)
    policy = OriginPolicy.for_gateway(settings)
    max_bytes, timeout_seconds = settings.max_body_bytes, settings.body_timeout_seconds
    app.add_middleware(BodyGuardMiddleware, max_bytes=max_bytes, timeout_seconds=timeout_seconds)
    app.add_middleware(TransportGuardMiddleware, policy=policy)  # outermost of the two: it runs first

    def hot_path(stack: ASGIApp) -> HotPath:
        """POST /v1/tool_call ahead of the app's stack, behind the same guards (see hot_path.py)."""
        return HotPath(
            stack,
            method="POST",
            path="/v1/tool_call",
            answer=answer,
            on_error=errors.handle,
            on_unexpected=errors.unexpected,
            transport=TransportGuardMiddleware(stack, policy),
            body=BodyGuardMiddleware(stack, max_bytes=max_bytes, timeout_seconds=timeout_seconds),
        )

    if authenticator.open:  # no credential is asked for, so no call is ever refused 401: nothing to count
        app.outermost = hot_path
    else:  # outermost of all: every 401 is counted, the hot path's as well as the app's routes'
        app.outermost = lambda stack: CountUnauthenticated(hot_path(stack), runtime.refusals)
    mcp_transport = JsonRpcGuard(StreamableHTTPASGIApp(manager))
    mcp_endpoint = StatelessMcpMethods(McpAuthEndpoint(authenticator, mcp_transport, challenge))
    observed = telemetry_settings()
    if observed.tracing or observed.metrics:  # the span of every request and the count of every answer
        inner = app.outermost
        app.outermost = lambda stack: HttpTelemetry(inner(stack))
    app.router.routes.append(Route("/mcp", endpoint=mcp_endpoint, methods=["GET", "POST", "DELETE"]))
    if settings.uses_jwt and settings.jwt_audience:
        app.router.routes.extend(resource_routes(settings.jwt_audience, settings.authorization_servers))

    app.include_router(catalog_routes(runtime, settings, authenticator, router))
    app.include_router(approval_routes(runtime, authenticator, PrincipalWaits(settings.max_waits_per_principal)))
    app.include_router(metrics_routes(runtime, authenticator))
    document_tool_call(app, answer.__doc__ or "")
    return app


class _Gateway(FastAPI):
    """FastAPI with one more layer outside its whole middleware stack (the hot path)."""

    outermost: Callable[[ASGIApp], ASGIApp] | None = None

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        return stack if self.outermost is None else self.outermost(stack)


def _transport_security(settings: GatewaySettings) -> TransportSecuritySettings:
    """The SDK's own Host/Origin check is off: TransportGuardMiddleware applies the one allow-list to every route."""
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)
