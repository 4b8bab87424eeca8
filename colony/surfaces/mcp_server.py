"""The MCP server: the eight ``colony_*`` kernel tools and every catalog tool.

Built on the SDK's low-level ``Server`` so each tool is served with its exact
schemas and annotations. Failures are answers, never a crashed session: a bad
argument or a refused call is an ``isError`` result naming what was wrong; only
an unknown tool name is a JSON-RPC error, as the protocol asks.
"""

from __future__ import annotations

import os
from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams

from colony.errors import ColonyError, ToolInputError, UnknownToolError
from colony.surfaces.auth import OPEN, Grants
from colony.surfaces.definitions import GOVERNANCE_PROPERTIES, IDENTITY_ARGUMENT
from colony.surfaces.error_mapping import mcp_error
from colony.surfaces.kernel_tools import call_kernel_tool, kernel_tools
from colony.surfaces.mcp_listing import catalog_listing, kernel_listing
from colony.surfaces.mcp_results import catalog_result, error_result, kernel_error_result, value_result
from colony.surfaces.toolhost import Caller, LocalToolHost

__all__ = ["AGENT_HEADER", "GRANTS_STATE", "build_mcp_server", "run_stdio"]

AGENT_HEADER = "x-colony-agent"
GRANTS_STATE = "colony_grants"


def build_mcp_server(host: LocalToolHost, *, default_agent: str | None = None) -> Server[Any]:
    """An MCP server over ``host``'s tools and its kernel; one per process."""
    agent_fallback = default_agent or os.environ.get("COLONY_AGENT_ID") or "anonymous"
    listing = ListToolsResult(tools=kernel_listing() + catalog_listing(host.tools().values()))

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return listing

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name in kernel_tools():
            try:
                answer = await anyio.to_thread.run_sync(call_kernel_tool, host.kernels, params.name, arguments)
            except ColonyError as error:
                return kernel_error_result(error)
            return value_result(answer)
        try:
            tool = host.tool(params.name)
        except UnknownToolError as error:
            raise MCPError.from_error_data(mcp_error(error)) from None
        try:
            caller = _caller(arguments, tool.definition.side_effecting, _header(ctx, AGENT_HEADER) or agent_fallback)
            _grants(ctx).require(tool.capability.spec)
            outcome = await host.call(params.name, arguments, caller)
        except ColonyError as error:
            return error_result(error)
        return catalog_result(outcome, governed=tool.definition.side_effecting)

    return Server("colony", version=_version(), on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client disconnects."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _header(ctx: ServerRequestContext[Any], name: str) -> str | None:
    request = ctx.request
    headers = getattr(request, "headers", None)
    value = headers.get(name) if headers is not None else None
    return value.strip() or None if isinstance(value, str) else None


def _grants(ctx: ServerRequestContext[Any]) -> Grants:
    """The grants the gateway's auth layer attached to the HTTP request; a stdio client is trusted.

    An HTTP request that carries no grants holds none: the check fails closed.
    """
    if ctx.request is None:
        return OPEN
    scope = getattr(ctx.request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    grants = state.get(GRANTS_STATE) if isinstance(state, dict) else None
    return grants if isinstance(grants, Grants) else Grants(frozenset())


def _caller(arguments: dict[str, Any], side_effecting: bool, fallback_agent: str) -> Caller:
    """Take the caller's identity (and, for a side-effecting tool, its case to the gate) out of the arguments."""
    names = (IDENTITY_ARGUMENT, *(GOVERNANCE_PROPERTIES if side_effecting else ()))
    taken = {name: arguments.pop(name) for name in names if name in arguments}
    for name, value in taken.items():
        if name == "evidence" and not isinstance(value, dict):
            raise ToolInputError.for_field(name, "evidence must be a JSON object", expected="object")
        if name != "evidence" and (not isinstance(value, str) or not value.strip()):
            raise ToolInputError.for_field(name, f"{name} must be a non-empty string", expected="string")
    return Caller(
        agent_id=taken.get("agent_id", fallback_agent),
        rationale=taken.get("rationale"),
        rollback_plan=taken.get("rollback_plan"),
        evidence=taken.get("evidence"),
    )


def _version() -> str:
    from importlib.metadata import version

    return version("colony")
