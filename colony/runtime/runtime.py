"""Runtime.call: the one pipeline every tool call goes through, whoever makes it.

    the steps (steps.py: trace -> count refusals -> limit calls), then the call itself:
    size caps -> resolve (catalog names only) -> permit (capability tokens)
    -> identity (who the call acts for) -> policies (forbid, hold or on) -> validate -> secrets
    -> pure: execute | governed: the Governor (gate, execute, record)

Every surface (HTTP, MCP over HTTP and stdio, the CLI, ``UnifiedToolClient``,
agents, the Prefect flows) builds a CallRequest and the caller's Principal and
calls this; nothing else runs a tool action for a caller. The kernel and approval
tools MCP serves go through the same steps (``Runtime.dispatch``). Each step is a
small function, testable alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio.to_thread
import pydantic_core

from colony.callers import CURRENT_CALLER
from colony.errors import FieldError, PayloadTooLargeError, ToolInputError
from colony.policy import PolicySettings
from colony.runtime.call import CallOutcome, CallRequest, CallStatus
from colony.runtime.catalog import Catalog, CatalogTool
from colony.runtime.executor import Executor, InProcessExecutor
from colony.runtime.governor import GovernanceEvents, Governor, HoldStrategy, Proposer, Verifier
from colony.runtime.kernels import KernelProvider
from colony.runtime.policies import PolicyStep
from colony.runtime.pool import ToolPool
from colony.runtime.principal import Principal
from colony.runtime.rate_limits import RateLimiter, RateLimitSettings
from colony.runtime.refusals import RefusalRecorder
from colony.runtime.steps import Call, Handler, call_steps, chain
from colony.runtime.workers import WorkerProcesses
from colony.secrets import resolve_secret
from colony.telemetry import AUTHORIZE, EXECUTE, resolved, stage

__all__ = ["Runtime", "check_arguments", "permit", "validate"]

DEFAULT_MAX_ARGUMENT_BYTES = 256 * 1024


class Runtime:
    """The catalog, the tool pool, the kernel and the Governor of one process."""

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        pool: ToolPool | None = None,
        kernels: KernelProvider | None = None,
        executor: Executor | None = None,
        on_hold: HoldStrategy | None = None,
        events: GovernanceEvents | None = None,
        propose: Proposer | None = None,
        timeout_seconds: float = 30.0,
        max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
        isolate_cpu_bound: bool = False,
        policies: PolicySettings | None = None,
        rate_limits: RateLimitSettings | None = None,
    ) -> None:
        """``rate_limits`` holds each principal's calls to them (a server's runtime); without, calls are unlimited."""
        self.catalog = catalog or Catalog()
        self.pool = pool or ToolPool()
        self.kernels = kernels or KernelProvider()
        # A server (the gateway, `colony mcp`) runs CPU-bound tools in worker processes, so one caller's
        # input cannot hold the GIL every other caller needs; a library user's own process runs them in a thread.
        workers = WorkerProcesses() if isolate_cpu_bound else None
        self.executor = executor or InProcessExecutor(self.pool, timeout_seconds=timeout_seconds, workers=workers)
        self.governor = Governor(self.kernels, self.executor, on_hold=on_hold, events=events, propose=propose)
        self.max_argument_bytes = max_argument_bytes
        self.refusals = RefusalRecorder(self.kernels)
        self.policies = PolicyStep(self.catalog, self.kernels, policies)  # COLONY_POLICIES when not given
        self.limiter = RateLimiter(rate_limits) if rate_limits is not None else None
        self.steps = call_steps(self.refusals, self.limiter)
        self._call = chain(self.steps, self._run)
        self.catalog.on_change(self._retire_removed)

    async def call(self, request: CallRequest, principal: Principal, *, verify: Verifier | None = None) -> CallOutcome:
        """Run ``request`` for ``principal`` through the steps; a governed call passes the gate first.

        Returns:
            The outcome: EXECUTED with the result, or for a governed call REFUSED / HELD /
            REJECTED / TIMED_OUT / FAILED with the verdict and the record. Errors before the
            gate (bad input, unknown tool, missing capability or secret, over a limit) are
            raised; a permission or identity refusal (403) or a limit's (429) is first counted
            for the audit log.
        """
        return await self.dispatch(Call(request, principal, verify=verify))

    async def dispatch(self, call: Call, handler: Handler | None = None) -> CallOutcome:
        """Run ``call`` through the steps to ``handler`` (default: the catalog tool's run, as ``call`` does).

        A surface serving calls that are not catalog tools (MCP's kernel and approval tools)
        passes its own handler, so they meet the same limits and refusal counting.
        """
        caller = CURRENT_CALLER.set(call.principal.agent_id)  # shared resources give each principal its share
        try:
            return await (self._call if handler is None else chain(self.steps, handler))(call)
        finally:
            CURRENT_CALLER.reset(caller)

    async def _run(self, call: Call) -> CallOutcome:
        request, principal = call.request, call.principal
        with stage(AUTHORIZE):
            arguments = check_arguments(request.arguments, self.max_argument_bytes)
            tool = self.catalog.resolve(request.tool)
            action = tool.action(request.action)
            resolved(tool.name, action)
            permit(principal, tool)
            acting = principal.acting_for(request.agent_id)
            # the operators' policies judge the resolved tool and checked arguments, before the gate
            decision = self.policies.fixed(tool, action) or await self.policies.decide(
                tool, action, arguments, principal, request
            )
            governed = tool.governed(action)
            request = self.policies.apply(decision, request, tool, action, acting, governed=governed)
            governed = governed or request.approval_required or request.approval_id is not None
            if governed:  # a pure call is validated by the action itself; a governed one before the gate sees it
                arguments = await validate(tool, action, arguments)
            for requirement in tool.cls.spec.secrets:
                resolve_secret(requirement)
        if governed:
            return await self.governor.govern(tool, action, arguments, request, acting, call.verify)
        with stage(EXECUTE, timed=False):
            execution = await self.executor.run(tool, action, arguments, None)
        return CallOutcome(
            status=CallStatus.EXECUTED,
            tool=tool.name,
            version=tool.cls.spec.version,
            action=action,
            acting=acting,
            result=execution.result,
            cached=execution.cached,
        )

    def visible_tools(self, principal: Principal) -> list[CatalogTool]:
        """The tools ``principal`` may call, in name order (what its listings show)."""
        tools = self.catalog.tools
        return [
            tools[name]
            for name in sorted(tools)
            if all(principal.allows(token) for token in tools[name].cls.spec.required_capabilities)
        ]

    async def refresh(self) -> int:
        """Re-read the catalog if its file changed, shut down removed tools; the catalog's generation.

        Surfaces that hold sessions open call this periodically (``watch_catalog``) so a
        removed tool's instance (its sandbox container, say) does not outlive its entry.
        """
        await anyio.to_thread.run_sync(lambda: self.catalog.refresh(check_now=True))
        if self.pool.retired:
            await self.pool.close_retired()
        return self.catalog.generation

    async def watch_catalog(
        self, on_change: Callable[[], Awaitable[None]] | None = None, *, interval_seconds: float = 1.0
    ) -> None:
        """Refresh every ``interval_seconds`` until cancelled; await ``on_change`` after each change of tools."""
        seen = self.catalog.generation
        while True:
            await anyio.sleep(interval_seconds)
            generation = await self.refresh()
            if generation != seen:
                seen = generation
                if on_change is not None:
                    await on_change()

    def _retire_removed(self, catalog: Catalog) -> None:
        """Catalog listener: a tool no longer in the catalog loses its pooled instance."""
        self.pool.retire({tool.cls for tool in catalog.tools.values()})

    async def aclose(self) -> None:
        """Shut down every tool instance and release the kernel's connections."""
        try:
            await self.pool.shutdown()
        finally:
            try:
                await anyio.to_thread.run_sync(lambda: self.refusals.flush(final=True))  # what is still counted
            finally:
                self.kernels.close()


def check_arguments(arguments: Any, max_bytes: int) -> dict[str, Any]:
    """The arguments as a dict, refused when not a JSON object or over the size cap."""
    if not isinstance(arguments, Mapping):
        raise ToolInputError(
            f"tool arguments must be a JSON object, got {type(arguments).__name__}",
            errors=[FieldError(field="tool_args", message="not a JSON object", expected="object")],
        )
    try:  # compact, as they travel; an unknown type counts as its str(), as the tool's schema will judge it
        size = len(pydantic_core.to_json(arguments, fallback=str))
    except pydantic_core.PydanticSerializationError as error:  # nested too deep, or a cycle
        raise ToolInputError(
            f"tool arguments cannot be encoded as JSON: {error}",
            errors=[FieldError(field="tool_args", message="not encodable as JSON", expected="object")],
        ) from None
    if size > max_bytes:
        raise PayloadTooLargeError(f"tool arguments are {size} bytes encoded; the cap is {max_bytes} bytes")
    return dict(arguments)


def permit(principal: Principal, tool: CatalogTool) -> None:
    """Raise CapabilityDeniedError unless ``principal`` holds every capability token the tool requires."""
    principal.require(tool.cls.spec.required_capabilities, f"calling {tool.name}")


async def validate(tool: CatalogTool, action: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments checked against the action's signature (ToolInputError naming each field)."""
    await tool.cls.actions()[action].checked_input(arguments)
    return arguments
