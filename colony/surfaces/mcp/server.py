"""The MCP server: the eight ``colony_*`` kernel tools and every catalog tool, over Runtime.call.

Built on the SDK's low-level ``Server`` so each tool is served with its exact
schemas and annotations. Who calls is the Principal authentication made: over
streamable HTTP the gateway's auth layer attaches it to the request; over stdio
the caller is this machine's local operator, acting for the agent ``colony mcp
--agent`` names. A listing shows only what the principal may call. Failures are
answers, never a crashed session: a bad argument or a refused call is an
``isError`` result naming what was wrong; only an unknown tool name is a
JSON-RPC error, as the protocol asks (so is a tool whose catalog entry failed to
load: it is not listed, and the error gives the reason), and a call over the
caller's limits (-32029, with when to retry). Kernel and approval tools go
through ``Runtime.dispatch`` like catalog tools: the same limits and refusal
counting. The listing is the catalog as it is now (re-read when the registry file
changes); ``colony mcp`` also tells its client when the tools change (see changes.py).
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams

from colony.errors import ColonyError, ToolInputError, ToolUnavailableError, UnknownToolError
from colony.runtime import (
    LOCAL_OPERATOR,
    Acting,
    CallOutcome,
    CallRequest,
    CallStatus,
    Principal,
    Runtime,
    split_case,
)
from colony.runtime.steps import Call
from colony.surfaces.approval_tools import approval_tools, call_approval_tool, mcp_resolution
from colony.surfaces.error_mapping import mcp_error
from colony.surfaces.kernel_tools import call_kernel_tool, kernel_tools
from colony.surfaces.mcp.changes import ToolListNotifier
from colony.surfaces.mcp.listing import approval_listing, catalog_listing, kernel_listing
from colony.surfaces.mcp.results import catalog_result, error_result, held_result, kernel_error_result, value_result
from colony.telemetry.surfaces import surface_span

__all__ = ["AGENT_HEADER", "PRINCIPAL_STATE", "REFUSAL_STATE", "build_mcp_server", "run_stdio"]

AGENT_HEADER = "x-colony-agent"
PRINCIPAL_STATE = "colony_principal"
REFUSAL_STATE = "colony_refusal"


def build_mcp_server(
    runtime: Runtime, *, acting_for: str | None = None, notifier: ToolListNotifier | None = None
) -> Server[Any]:
    """An MCP server over ``runtime``.

    ``acting_for`` is the agent a stdio session's local operator acts for; with a ``notifier`` the
    server serves ``subscriptions/listen`` and remembers its session to tell of catalog changes.
    """
    listings: dict[tuple[frozenset[str], int], ListToolsResult] = {}

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        if notifier is not None:
            notifier.remember(ctx)
        principal = _principal(ctx)
        runtime.catalog.refresh()  # re-read first if the registry file changed (at most once a second)
        key = (principal.capabilities, runtime.catalog.generation)
        listing = listings.get(key)
        if listing is None:
            if any(generation != key[1] for _, generation in listings):
                listings.clear()  # listings of an older catalog are never served again
            listing = listings[key] = ListToolsResult(
                tools=kernel_listing(principal)
                + approval_listing(principal)
                + catalog_listing(tool.cls for tool in runtime.visible_tools(principal))
            )
        return listing

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        """tools/call, in its span: a ``traceparent`` in the request's ``_meta`` continues the caller's trace.

        The MCP SDK opens that span itself (named as here); Colony's attributes join it.
        """
        meta = dict(params.meta) if params.meta is not None else None
        name = f"tools/call {params.name}"
        with surface_span(name, "mcp", carrier=meta, values={"mcp.method.name": "tools/call"}, join=name):
            return await answer_call(ctx, params)

    async def answer_call(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if notifier is not None:
            notifier.remember(ctx)
        principal = _principal(ctx)
        arguments = dict(params.arguments or {})
        operation = kernel_tools().get(params.name) or approval_tools().get(params.name)
        if operation is not None:
            request = CallRequest(tool=params.name, arguments=arguments, agent_id=_agent(arguments))
            operation_call = Call(request, principal, verb="mcp")
            try:
                outcome = await runtime.dispatch(operation_call, operate)
            except ColonyError as error:
                _refuse_at_transport(ctx, operation_call, error)
                return kernel_error_result(error) if params.name in kernel_tools() else error_result(error)
            return value_result(outcome.result)
        try:
            tool = runtime.catalog.resolve(params.name)
        except ToolUnavailableError as error:  # not listed, so a protocol error like an unknown name, saying why
            raise MCPError.from_error_data(mcp_error(error)) from None
        except UnknownToolError:
            visible = sorted(listed.name for listed in (await list_tools(ctx, None)).tools)
            unknown = UnknownToolError(
                f"unknown tool {params.name!r} (the tools this caller may call: {', '.join(visible) or 'none'})"
            )
            raise MCPError.from_error_data(mcp_error(unknown)) from None
        call: Call | None = None
        try:
            request = _request(
                params.name, arguments, tool.governed(tool.primary_action), _header(ctx, AGENT_HEADER) or acting_for
            )
            call = Call(request, principal)
            outcome = await runtime.dispatch(call)
            if outcome.status is CallStatus.HELD and outcome.approval is not None:
                return held_result(outcome, mcp_resolution(outcome.approval.approval_id))
            outcome.raise_for_status()
        except ColonyError as error:
            _refuse_at_transport(ctx, call, error)
            return error_result(error)
        return catalog_result(outcome)

    async def operate(call: Call) -> CallOutcome:
        """The handler of a kernel or approval tool: its kernel operation, in a worker thread."""
        name, principal = call.request.tool, call.principal
        run = call_kernel_tool if name in kernel_tools() else call_approval_tool
        answer = await anyio.to_thread.run_sync(run, runtime.kernels, name, call.request.arguments, principal)
        version = (kernel_tools().get(name) or approval_tools()[name]).version
        return CallOutcome(
            CallStatus.EXECUTED,
            tool=name,
            version=version,
            action=name,
            acting=Acting(principal.agent_id),
            result=answer,
        )

    return Server(
        "colony",
        version=_version(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=notifier.listen if notifier is not None else None,
    )


async def run_stdio(server: Server[Any], runtime: Runtime, notifier: ToolListNotifier) -> None:
    """Serve ``server`` over stdin and stdout until the client disconnects, telling it when the tools change."""
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as group:
        group.start_soon(runtime.watch_catalog, notifier.tools_changed)
        group.start_soon(runtime.refusals.run)  # refused calls reach the audit log within a second
        await server.run(read_stream, write_stream, options)
        group.cancel_scope.cancel()


def _refuse_at_transport(ctx: ServerRequestContext[Any], call: Call | None, error: ColonyError) -> None:
    """A call the limits refused is a JSON-RPC error, and over HTTP a 429 with Retry-After (see gateway/limits.py).

    The refusal is left in the request's state for the /mcp endpoint, which sets the
    status and headers of the answer the transport writes; over stdio there is no status.
    """
    if call is None or call.limited is not error:
        return
    state = _state(ctx)
    if state is not None:
        state[REFUSAL_STATE] = error
    raise MCPError.from_error_data(mcp_error(error)) from None


def _agent(arguments: dict[str, Any]) -> str | None:
    """The agent a kernel operation names (for the audit log's "on behalf of")."""
    agent = arguments.get("agent_id")
    return agent if isinstance(agent, str) and agent.strip() else None


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
    state = _state(ctx)
    principal = state.get(PRINCIPAL_STATE) if state is not None else None
    return principal if isinstance(principal, Principal) else Principal(agent_id="unauthenticated")


def _state(ctx: ServerRequestContext[Any]) -> dict[str, Any] | None:
    """The HTTP request's ASGI state (shared with the gateway's layers); None over stdio."""
    scope = getattr(ctx.request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    return state if isinstance(state, dict) else None


def _request(name: str, arguments: dict[str, Any], governed: bool, agent: str | None) -> CallRequest:
    """The call: a governed tool's case to the gate is taken out of the arguments; identity never is.

    A governed call may also carry ``approval_id`` (resubmitting a held call); it is not in the
    served schema, so the tools' definitions stay as pinned, and the held answer names it.
    """
    if not governed:
        return CallRequest(tool=name, arguments=arguments, agent_id=agent)
    approval_id = arguments.pop("approval_id", None)
    arguments, case = split_case(arguments)
    return CallRequest.with_case(name, arguments, case, agent_id=agent, approval_id=_approval_id(approval_id))


def _approval_id(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        raise ToolInputError.for_field("approval_id", "approval_id must be an approval request's id", expected="string")
    return value


def _version() -> str:
    from importlib.metadata import version

    return version("colony")
