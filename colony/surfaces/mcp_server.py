"""The MCP server: the eight ``colony_*`` kernel tools and every catalog tool, over Runtime.call.

Built on the SDK's low-level ``Server`` so each tool is served with its exact
schemas and annotations. Who calls is the Principal authentication made: over
streamable HTTP the gateway's auth layer attaches it to the request; over stdio
the caller is this machine's local operator, acting for the agent ``colony mcp
--agent`` names. A listing shows only what the principal may call. Failures are
answers, never a crashed session: a bad argument or a refused call is an
``isError`` result naming what was wrong; only an unknown tool name is a
JSON-RPC error, as the protocol asks.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

from colony.errors import ActionNotExecutedError, ColonyError, ToolInputError, UnknownToolError
from colony.runtime import LOCAL_OPERATOR, CallOutcome, CallRequest, Principal, Runtime
from colony.runtime.kernel_access import KERNEL_PERMISSIONS
from colony.surfaces.definitions import GOVERNANCE_PROPERTIES, served_definition
from colony.surfaces.error_mapping import mcp_error
from colony.surfaces.kernel_tools import kernel_tools, run_kernel_tool

__all__ = ["AGENT_HEADER", "PRINCIPAL_STATE", "build_mcp_server", "run_stdio"]

AGENT_HEADER = "x-colony-agent"
PRINCIPAL_STATE = "colony_principal"
_KERNEL_ANNOTATIONS = {
    "colony_propose_action": ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    "colony_record_outcome": ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    "colony_tick": ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
}
_KERNEL_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)


def build_mcp_server(runtime: Runtime, *, acting_for: str | None = None) -> Server[Any]:
    """An MCP server over ``runtime``; ``acting_for`` is the agent a stdio session's local operator acts for."""
    listings: dict[tuple[frozenset[str], int], ListToolsResult] = {}

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        principal = _principal(ctx)
        key = (principal.capabilities, runtime.catalog.generation)
        listing = listings.get(key)
        if listing is None:
            listing = listings[key] = ListToolsResult(
                tools=_kernel_listing(principal) + _catalog_listing(runtime, principal)
            )
        return listing

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        principal = _principal(ctx)
        arguments = dict(params.arguments or {})
        if params.name in kernel_tools():
            answer = await anyio.to_thread.run_sync(run_kernel_tool, runtime.kernels, params.name, arguments, principal)
            failed = isinstance(answer, dict) and set(answer) == {"error"}
            return _answer(answer, structured=isinstance(answer, dict), error=failed)
        try:
            tool = runtime.catalog.resolve(params.name)
        except UnknownToolError as error:
            raise MCPError.from_error_data(mcp_error(error)) from None
        try:
            request = _request(
                params.name, arguments, tool.governed(tool.primary_action), _header(ctx, AGENT_HEADER) or acting_for
            )
            outcome = (await runtime.call(request, principal)).raise_for_status()
        except ColonyError as error:
            return _error_answer(error)
        return _catalog_answer(outcome)

    return Server("colony", version=_version(), on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client disconnects."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _kernel_listing(principal: Principal) -> list[Tool]:
    return [
        Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema,
            output_schema=tool.structured_output_schema,
            annotations=_KERNEL_ANNOTATIONS.get(tool.name, _KERNEL_READ_ONLY),
        )
        for tool in kernel_tools().values()
        if principal.allows(KERNEL_PERMISSIONS[tool.name])
    ]


def _catalog_listing(runtime: Runtime, principal: Principal) -> list[Tool]:
    tools = []
    for tool in runtime.visible_tools(principal):
        definition = served_definition(tool.cls)
        tools.append(
            Tool(
                name=definition.name,
                description=definition.description,
                input_schema=definition.input_schema,
                output_schema=definition.output_schema,
                annotations=ToolAnnotations(**definition.annotations),
                meta={"colony/version": tool.cls.spec.version, "colony/definition_sha256": definition.sha256},
            )
        )
    return tools


def _answer(value: Any, *, structured: bool, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(value, default=str))],
        structured_content=value if structured else None,
        is_error=error,
    )


def _error_answer(error: ColonyError) -> CallToolResult:
    body: dict[str, Any] = {"error": str(error), "code": mcp_error(error).code, "details": error.to_dict()}
    if isinstance(error, ActionNotExecutedError):
        body["verdict"] = error.verdict
    return _answer(body, structured=True, error=True)


def _catalog_answer(outcome: CallOutcome) -> CallToolResult:
    if outcome.governed:
        return _answer(
            {"verdict": outcome.verdict, "result": outcome.result, "outcome": outcome.record}, structured=True
        )
    return _answer(outcome.result, structured=isinstance(outcome.result, dict))


def _header(ctx: ServerRequestContext[Any], name: str) -> str | None:
    request = ctx.request
    headers = getattr(request, "headers", None)
    value = headers.get(name) if headers is not None else None
    return value.strip() or None if isinstance(value, str) else None


def _principal(ctx: ServerRequestContext[Any]) -> Principal:
    """The principal the gateway's auth layer attached to the HTTP request; over stdio, the local operator.

    An HTTP request that carries no principal holds nothing: the check fails closed.
    """
    if ctx.request is None:
        return LOCAL_OPERATOR
    scope = getattr(ctx.request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    principal = state.get(PRINCIPAL_STATE) if isinstance(state, dict) else None
    return principal if isinstance(principal, Principal) else Principal(agent_id="unauthenticated")


def _request(name: str, arguments: dict[str, Any], governed: bool, agent: str | None) -> CallRequest:
    """The call: a governed tool's case to the gate is taken out of the arguments; identity never is."""
    case = {key: arguments.pop(key) for key in GOVERNANCE_PROPERTIES if governed and key in arguments}
    for key, value in case.items():
        if key == "evidence" and not isinstance(value, dict):
            raise ToolInputError.for_field(key, "evidence must be a JSON object", expected="object")
        if key != "evidence" and (not isinstance(value, str) or not value.strip()):
            raise ToolInputError.for_field(key, f"{key} must be a non-empty string", expected="string")
    return CallRequest(
        tool=name,
        arguments=arguments,
        agent_id=agent,
        rationale=case.get("rationale"),
        rollback_plan=case.get("rollback_plan"),
        evidence=case.get("evidence"),
    )


def _version() -> str:
    from importlib.metadata import version

    return version("colony")
