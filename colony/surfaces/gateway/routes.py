"""The gateway's own answers: a tool call, health, the catalog, and how an error becomes a JSON answer.

app.py wires them to the app (the tool call through the HotPath, the rest as routes);
each is built from the parts it reads, so it can be read and tested without the wiring.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NamedTuple

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import TypeAdapter, ValidationError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException

from colony.errors import MAX_FIELD_ERRORS, ColonyError, field_errors, summarize
from colony.runtime import Runtime
from colony.surfaces.auth import Authenticator, principal_of
from colony.surfaces.definitions import catalog_record, served_definition, unavailable_record
from colony.surfaces.error_mapping import http_headers, http_status
from colony.surfaces.gateway.approvals import approval_links
from colony.surfaces.gateway.hot_path import Answer, AnswerFunction
from colony.surfaces.gateway.mesh import merge
from colony.surfaces.gateway.models import ToolCallRequest
from colony.surfaces.gateway.routing import Router
from colony.surfaces.gateway.settings import GatewaySettings
from colony.surfaces.mcp.server import AGENT_HEADER

__all__ = ["ErrorHandlers", "catalog_routes", "error_handlers", "tool_call"]

HandleError = Callable[[Request, Exception], Awaitable[JSONResponse] | None]


def tool_call(router: Router, authenticator: Authenticator) -> AnswerFunction:
    """POST /v1/tool_call: the body parsed in one pass, then the call routed to its node."""

    async def answer(headers: Headers, raw: bytes) -> Answer:
        """Run a tool here, on a named peer, or on the first healthy node that has it."""
        principal = await principal_of(authenticator, headers.get("authorization"))
        body = _parse_tool_call(raw)
        agent = (headers.get(AGENT_HEADER) or "").strip() or None
        # a peer authenticates the caller itself: it is shown the caller's credential, never this gateway's
        credential = None if authenticator.open else headers.get("authorization")
        routed = await router.call(body, principal, agent, credential)
        if routed.held and routed.approval is not None:
            links = approval_links(routed.approval["approval_id"])
            approval = routed.approval | links
            held = {"ok": False, "status": "held", "node": routed.node, "verdict": routed.verdict, "approval": approval}
            return Answer(held, status=202, headers=((b"location", links["url"].encode("latin-1")),))
        answered: dict[str, Any] = {"ok": True, "result": routed.result, "node": routed.node}
        if routed.verdict is not None:
            answered |= {"verdict": routed.verdict, "outcome": routed.record}
        if routed.approval is not None:
            answered["approval"] = routed.approval
        return Answer(answered)

    return answer


def catalog_routes(
    runtime: Runtime, settings: GatewaySettings, authenticator: Authenticator, router: Router
) -> APIRouter:
    """GET /health and GET /v1/catalog (with the mesh's tools when enriched)."""
    routes = APIRouter()

    @routes.get("/health", tags=["gateway"])
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

    @routes.get("/v1/catalog", tags=["tools"])
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
        listings = await router.mesh.peers() if settings.peers and not local else []
        return {
            "ok": True,
            "node": settings.node,
            "tools": merge(records, listings, principal, wanted),
            "unavailable": unavailable,
            "peers": [listing.status for listing in listings],
        }

    return routes


class ErrorHandlers(NamedTuple):
    """The app's rendering of what the HotPath's call raised: ``handle`` (None: unexpected) and ``unexpected``."""

    handle: HandleError
    unexpected: Callable[[Request, Exception], Awaitable[JSONResponse]]


def error_handlers(app: FastAPI, challenge: str) -> ErrorHandlers:
    """Register how each error becomes a JSON answer (a 401 names ``challenge``); the same for the hot path."""

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
            "errors": [problem.model_dump() for problem in problems[:MAX_FIELD_ERRORS]],
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

    def handle(request: Request, error: Exception) -> Awaitable[JSONResponse] | None:
        """The app's own handler for what a hot-path call raised (None: the server-error handler's)."""
        if isinstance(error, ColonyError):
            return colony_error(request, error)
        if isinstance(error, RequestValidationError):
            return invalid_request(request, error)
        if isinstance(error, StarletteHTTPException):
            return http_error(request, error)
        return None

    return ErrorHandlers(handle, unexpected)


_TOOL_CALL = TypeAdapter(ToolCallRequest)


def _parse_tool_call(raw: bytes) -> ToolCallRequest:
    """The request body, parsed and validated in one pass (FastAPI's body injection costs more than the call)."""
    try:
        return _TOOL_CALL.validate_json(raw)
    except ValidationError as error:
        raise RequestValidationError(
            [{**detail, "loc": ("body", *detail["loc"])} for detail in error.errors(include_url=False)]
        ) from None
