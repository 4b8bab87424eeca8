"""The HTTP gateway: the catalog, tool calls, the MCP endpoint and health, in one FastAPI app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import httpx
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import TypeAdapter, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from colony.errors import ColonyError
from colony.surfaces.error_mapping import http_status
from colony.surfaces.gateway.limits import BodyLimitMiddleware, McpAuthEndpoint
from colony.surfaces.gateway.models import ToolCallRequest, ToolCallResponse
from colony.surfaces.gateway.routing import Router
from colony.surfaces.gateway.settings import GatewaySettings, is_loopback
from colony.surfaces.kernel_provider import KernelProvider
from colony.surfaces.mcp_server import AGENT_HEADER, build_mcp_server
from colony.surfaces.toolhost import Caller, LocalToolHost

__all__ = ["create_app"]

_ERROR_MEANINGS = {
    400: "Bad tool arguments, naming each field at fault.",
    401: "Missing or unknown bearer token.",
    403: "The token lacks a capability token the tool requires (named in error.missing).",
    404: "No such tool on the chosen node(s).",
    409: "The gate refused or held a side-effecting call (error.verdict).",
    413: "Request body or tool arguments over the cap.",
    422: "The request body does not fit ToolCallRequest.",
    504: "The tool or a peer did not answer in time.",
}


def create_app(settings: GatewaySettings | None = None, host: LocalToolHost | None = None) -> FastAPI:
    """The gateway app; ``settings`` default to the environment's, ``host`` to the catalog's tools."""
    settings = settings or GatewaySettings.from_env()
    settings.check_safe()
    host = host or LocalToolHost(
        kernels=KernelProvider(),
        timeout_seconds=settings.call_timeout_seconds,
        max_argument_bytes=settings.max_argument_bytes,
    )
    host.tools()  # a broken catalog fails at start-up, not on the first call
    tokens = settings.token_table()
    manager = StreamableHTTPSessionManager(
        app=build_mcp_server(host),
        json_response=True,
        stateless=True,
        security_settings=_transport_security(settings),
        max_request_body_size=settings.max_body_bytes,
    )
    http = httpx.AsyncClient()
    router = Router(host, settings, http)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with manager.run():
            yield
        await http.aclose()

    app = FastAPI(
        title="Colony gateway",
        summary="Colony's tools over HTTP and MCP, behind capability tokens.",
        version="1",
        lifespan=lifespan,
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    mcp_endpoint = McpAuthEndpoint(tokens, StreamableHTTPASGIApp(manager))
    app.router.routes.append(Route("/mcp", endpoint=mcp_endpoint, methods=["GET", "POST", "DELETE"]))

    @app.exception_handler(ColonyError)
    async def colony_error(_: Request, error: ColonyError) -> JSONResponse:
        headers = {"www-authenticate": 'Bearer realm="colony"'} if http_status(error) == 401 else None
        return JSONResponse({"ok": False, "error": error.to_dict()}, status_code=http_status(error), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": ".".join(str(part) for part in detail["loc"][1:]) or "<body>", "message": detail["msg"]}
            for detail in error.errors()
        ]
        summary = "; ".join(f"{problem['field']}: {problem['message']}" for problem in problems)
        body = {"type": "InvalidRequest", "message": f"invalid request: {summary}", "errors": problems}
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
        """Whether this node is up, what it is called and how many tools it serves."""
        return {"status": "ok", "node": settings.node, "tools": len(host.tools())}

    @app.get("/v1/catalog", tags=["tools"])
    async def catalog(
        request: Request,
        enrich: Annotated[bool, Query(description="Add each tool's card, MCP definition, pin and node.")] = False,
        policy_tag: Annotated[list[str] | None, Query(description="Only tools with every one of these tags.")] = None,
        deterministic: Annotated[bool | None, Query(description="Only (non-)deterministic tools.")] = None,
    ) -> dict[str, Any]:
        """The tools this node serves (seed 004's ToolSchema records), filtered by policy tags and determinism."""
        tokens.authenticate(request.headers.get("authorization"))
        records = []
        for name in sorted(host.tools()):
            tool = host.tools()[name]
            record = tool.catalog_record()
            if not set(policy_tag or ()) <= set(record["policy_tags"]):
                continue
            if deterministic is not None and record["deterministic"] is not deterministic:
                continue
            if enrich:
                record |= {
                    "node": settings.node,
                    "card": tool.capability.get_action_group_description(),
                    "mcp": {
                        "description": tool.definition.description,
                        "input_schema": tool.definition.input_schema,
                        "output_schema": tool.definition.output_schema,
                        "annotations": tool.definition.annotations,
                    },
                    "definition_sha256": tool.definition.sha256,
                }
            records.append(record)
        return {"ok": True, "node": settings.node, "tools": records}

    async def tool_call(request: Request) -> JSONResponse:
        """Run a tool here, on a named peer, or on the first healthy node that has it."""
        grants = tokens.authenticate(request.headers.get("authorization"))
        body = _parse_tool_call(await request.body())
        caller = Caller(
            agent_id=(request.headers.get(AGENT_HEADER) or "").strip() or "anonymous",
            rationale=body.rationale,
            rollback_plan=body.rollback_plan,
            evidence=body.evidence,
        )
        routed = await router.call(body, grants, caller)
        answer: dict[str, Any] = {"ok": True, "result": routed.answer.result, "node": routed.node}
        if routed.answer.verdict is not None:
            answer |= {"verdict": routed.answer.verdict, "outcome": routed.answer.outcome}
        return JSONResponse(answer)

    # The hot path is a plain Starlette route: FastAPI's per-request machinery costs
    # more than the call itself. Its OpenAPI entry is written by _document_tool_call.
    app.router.routes.insert(0, Route("/v1/tool_call", tool_call, methods=["POST"]))
    _document_tool_call(app, tool_call.__doc__ or "")
    return app


def _transport_security(settings: GatewaySettings) -> TransportSecuritySettings:
    """DNS-rebinding protection for /mcp: only this machine's names, plus what the operator allows."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", *settings.allowed_hosts]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *settings.allowed_origins]
    if not is_loopback(settings.host):
        hosts.append(f"{settings.host}:*")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


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
    """Publish POST /v1/tool_call (a Starlette route) in the OpenAPI document, with its models."""
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
            responses = {"200": {"description": "The tool's result.", "content": answer}}
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
