"""The HTTP gateway: the catalog, tool calls, the MCP endpoint and health, in one FastAPI app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import httpx
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import TypeAdapter, ValidationError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import ASGIApp

from colony.api_docs import serve_docs
from colony.errors import ColonyError, field_errors, summarize
from colony.runtime import KernelProvider, Runtime
from colony.surfaces.auth import principal_of
from colony.surfaces.definitions import catalog_record, served_definition, unavailable_record
from colony.surfaces.error_mapping import http_headers, http_status
from colony.surfaces.gateway.approvals import approval_links, approval_routes
from colony.surfaces.gateway.body import BodyGuardMiddleware
from colony.surfaces.gateway.hot_path import Answer, HotPath
from colony.surfaces.gateway.jsonrpc import JsonRpcGuard
from colony.surfaces.gateway.limits import McpAuthEndpoint
from colony.surfaces.gateway.mcp_methods import StatelessMcpMethods
from colony.surfaces.gateway.mesh import merge
from colony.surfaces.gateway.models import ToolCallRequest, ToolCallResponse
from colony.surfaces.gateway.origins import OriginPolicy, TransportGuardMiddleware
from colony.surfaces.gateway.refused import CountUnauthenticated
from colony.surfaces.gateway.resource import metadata_url, resource_routes
from colony.surfaces.gateway.routing import Router
from colony.surfaces.gateway.settings import GatewaySettings
from colony.surfaces.gateway.shares import PrincipalWaits
from colony.surfaces.mcp.server import AGENT_HEADER, build_mcp_server

if TYPE_CHECKING:
    from colony.kernel import KernelSettings

__all__ = ["create_app"]

_ERROR_MEANINGS = {
    400: "Bad tool arguments, naming each field at fault.",
    401: "Missing or unknown bearer token.",
    403: "The principal lacks a capability token the tool requires (error.missing), or names an agent it is not.",
    404: "No such tool on the chosen node(s).",
    503: "The tool's catalog entry failed to load (error.tool, error.reason), or a service it needs is down.",
    408: "The request body did not arrive in time.",
    409: "The gate refused a side-effecting call (error.verdict), or an approval was already decided or used.",
    413: "Request body or tool arguments over the cap.",
    415: "The request body is not declared as application/json.",
    421: "The Host header names another server (DNS rebinding is refused).",
    422: "The request body does not fit ToolCallRequest.",
    429: "The caller is over its rate or concurrency limit for the tool, or its client address over its share "
    "of connections (Retry-After says when to retry).",
    504: "The tool or a peer did not answer in time.",
}


def create_app(
    settings: GatewaySettings | None = None,
    runtime: Runtime | None = None,
    *,
    kernel_settings: KernelSettings | None = None,
) -> FastAPI:
    """The gateway app; ``settings`` default to the environment's, ``runtime`` to one the app owns.

    A runtime the app creates (and so its tool instances, sandbox containers included) is
    shut down with the app; one passed in belongs to the caller, and so do its limits. The app's
    own runtime builds its kernel from ``kernel_settings`` (default: ``COLONY_*``) and holds calls
    to ``settings.rate_limits``.
    """
    settings = settings or GatewaySettings.from_env()
    settings.check_safe()
    owned = runtime is None
    runtime = runtime or Runtime(
        kernels=KernelProvider(settings=kernel_settings),
        timeout_seconds=settings.call_timeout_seconds,
        max_argument_bytes=settings.max_argument_bytes,
        isolate_cpu_bound=True,
        rate_limits=settings.rate_limits,
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
    mesh = router.mesh

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

    async def tool_call(headers: Headers, raw: bytes) -> Answer:
        """Run a tool here, on a named peer, or on the first healthy node that has it."""
        principal = await principal_of(authenticator, headers.get("authorization"))
        body = _parse_tool_call(raw)
        agent = (headers.get(AGENT_HEADER) or "").strip() or None
        routed = await router.call(body, principal, agent)
        if routed.held and routed.approval is not None:
            links = approval_links(routed.approval["approval_id"])
            approval = routed.approval | links
            held = {"ok": False, "status": "held", "node": routed.node, "verdict": routed.verdict, "approval": approval}
            return Answer(held, status=202, headers=((b"location", links["url"].encode("latin-1")),))
        answer: dict[str, Any] = {"ok": True, "result": routed.result, "node": routed.node}
        if routed.verdict is not None:
            answer |= {"verdict": routed.verdict, "outcome": routed.record}
        if routed.approval is not None:
            answer["approval"] = routed.approval
        return Answer(answer)

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
            answer=tool_call,
            on_error=lambda request, error: handle_error(request, error),
            on_unexpected=lambda request, error: unexpected(request, error),
            transport=TransportGuardMiddleware(stack, policy),
            body=BodyGuardMiddleware(stack, max_bytes=max_bytes, timeout_seconds=timeout_seconds),
        )

    if authenticator.open:  # no credential is asked for, so no call is ever refused 401: nothing to count
        app.outermost = hot_path
    else:  # outermost of all: every 401 is counted, the hot path's as well as the app's routes'
        app.outermost = lambda stack: CountUnauthenticated(hot_path(stack), runtime.refusals)
    mcp_transport = JsonRpcGuard(StreamableHTTPASGIApp(manager))
    mcp_endpoint = StatelessMcpMethods(McpAuthEndpoint(authenticator, mcp_transport, challenge))
    app.router.routes.append(Route("/mcp", endpoint=mcp_endpoint, methods=["GET", "POST", "DELETE"]))
    if settings.uses_jwt and settings.jwt_audience:
        app.router.routes.extend(resource_routes(settings.jwt_audience, settings.authorization_servers))

    @app.exception_handler(ColonyError)
    async def colony_error(_: Request, error: ColonyError) -> JSONResponse:
        headers = http_headers(error, challenge=challenge) or None
        return JSONResponse({"ok": False, "error": error.to_dict()}, status_code=http_status(error), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = field_errors(error.errors(), skip=1)
        body = {
            "type": "InvalidRequest",
            "message": f"invalid request: {summarize(problems)}",
            "errors": [problem.model_dump() for problem in problems],
        }
        return JSONResponse({"ok": False, "error": body}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        body = {"type": "HTTPError", "message": str(error.detail)}
        return JSONResponse({"ok": False, "error": body}, status_code=error.status_code, headers=error.headers)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, error: Exception) -> JSONResponse:
        body = {"type": "InternalError", "message": f"{type(error).__name__}: {error}"}
        return JSONResponse({"ok": False, "error": body}, status_code=500)

    @app.get("/health", tags=["gateway"])
    async def health() -> dict[str, Any]:
        """Whether this node is up, what it is called, how many tools it serves and how many entries failed to load.

        Which entries and why is in ``/v1/catalog`` (authenticated): a probe only needs to see the count.
        """
        return {
            "status": "ok",
            "node": settings.node,
            "tools": len(runtime.catalog.tools),
            "unavailable": len(runtime.catalog.unavailable),
        }

    @app.get("/v1/catalog", tags=["tools"])
    async def catalog(
        request: Request,
        enrich: Annotated[
            bool,
            Query(description="Add each tool's card, MCP definition, pin and node, and the peers' tools (a mesh)."),
        ] = False,
        local: Annotated[
            bool, Query(description="With enrich: this node's tools only (what a gateway asks its peers).")
        ] = False,
        policy_tag: Annotated[list[str] | None, Query(description="Only tools with every one of these tags.")] = None,
        deterministic: Annotated[bool | None, Query(description="Only (non-)deterministic tools.")] = None,
    ) -> dict[str, Any]:
        """The tools this caller may call (seed 004's ToolSchema records), filtered by tags and determinism.

        With ``enrich=true`` on a gateway with peers this is the mesh catalog: the peers' tools
        too, one record per tool id and version with every node that serves it (``nodes``), and
        a ``peers`` section saying which peers answered and what went wrong with the others.
        ``unavailable`` lists this node's catalog entries that failed to load (``name``,
        ``reason``, ``available: false``); calling one is refused with ToolUnavailableError (503).
        """
        principal = await principal_of(authenticator, request.headers.get("authorization"))

        def wanted(record: dict[str, Any]) -> bool:
            if not set(policy_tag or ()) <= set(record["policy_tags"]):
                return False
            return deterministic is None or record["deterministic"] is deterministic

        records = []
        for tool in runtime.visible_tools(principal):
            definition = served_definition(tool.cls)
            record = catalog_record(tool.cls)
            if not wanted(record):
                continue
            if enrich:
                record |= {
                    "node": settings.node,
                    "card": tool.cls().get_action_group_description(),
                    "mcp": {
                        "description": definition.description,
                        "input_schema": definition.input_schema,
                        "output_schema": definition.output_schema,
                        "annotations": definition.annotations,
                    },
                    "definition_sha256": definition.sha256,
                }
            records.append(record)
        unavailable = [unavailable_record(tool) for _, tool in sorted(runtime.catalog.unavailable.items())]
        if not enrich:
            return {"ok": True, "node": settings.node, "tools": records, "unavailable": unavailable}
        listings = await mesh.peers() if settings.peers and not local else []
        return {
            "ok": True,
            "node": settings.node,
            "tools": merge(records, listings, principal, wanted),
            "unavailable": unavailable,
            "peers": [listing.status for listing in listings],
        }

    app.include_router(approval_routes(runtime, authenticator, PrincipalWaits(settings.max_waits_per_principal)))

    def handle_error(request: Request, error: Exception) -> Awaitable[JSONResponse] | None:
        """The app's own handler for what a hot-path call raised (None: the server-error handler's)."""
        if isinstance(error, ColonyError):
            return colony_error(request, error)
        if isinstance(error, RequestValidationError):
            return invalid_request(request, error)
        if isinstance(error, StarletteHTTPException):
            return http_error(request, error)
        return None

    _document_tool_call(app, tool_call.__doc__ or "")
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


_TOOL_CALL = TypeAdapter(ToolCallRequest)


def _parse_tool_call(raw: bytes) -> ToolCallRequest:
    """The request body, parsed and validated in one pass (FastAPI's body injection costs more than the call)."""
    try:
        return _TOOL_CALL.validate_json(raw)
    except ValidationError as error:
        raise RequestValidationError(
            [{**detail, "loc": ("body", *detail["loc"])} for detail in error.errors(include_url=False)]
        ) from None


def _document_tool_call(app: FastAPI, summary: str) -> None:
    """Publish POST /v1/tool_call (answered by the HotPath layer) in the OpenAPI document, with its models."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in (ToolCallRequest, ToolCallResponse):
                definition = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(definition.pop("$defs", {}))
                components[model.__name__] = definition
            answer = {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCallResponse"}}}
            responses = {
                "200": {"description": "The tool's result.", "content": answer},
                "202": {
                    "description": "Held for a person: approval names the request, its url and how to resolve it.",
                    "content": answer,
                },
            }
            for status, meaning in _ERROR_MEANINGS.items():
                responses[str(status)] = {"description": meaning, "content": answer}
            request = {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCallRequest"}}}
            schema["paths"]["/v1/tool_call"] = {
                "post": {
                    "tags": ["tools"],
                    "summary": "Tool Call",
                    "description": summary,
                    "operationId": "tool_call_v1_tool_call_post",
                    "requestBody": {"required": True, "content": request},
                    "responses": responses,
                }
            }
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]
