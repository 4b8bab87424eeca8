"""The local tool host: the catalog's tools, mounted once and called by every surface.

The MCP server, the gateway and the in-process client all call tools here, so
they share one validation path, one timeout and one governance path: a
side-effecting tool is proposed to the kernel, run only on EXECUTE, and its
outcome recorded with the verdict's authorization.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from colony.capability import ToolCapability
from colony.catalog import ToolEntry, get_entry, load_registry, planner_visible, resolve_capability
from colony.errors import (
    CallTimeoutError,
    CatalogError,
    ColonyError,
    FieldError,
    PayloadTooLargeError,
    ToolExecutionError,
    ToolInputError,
)
from colony.surfaces.definitions import GOVERNANCE_PROPERTIES, IDENTITY_ARGUMENT, ToolDefinition, served_definition
from colony.surfaces.kernel_provider import KernelProvider

__all__ = ["CallResult", "Caller", "CatalogTool", "LocalToolHost"]

# A pure tool that declares a CPU cost under this runs on the event loop: a thread
# hop would cost more than the call. A tool that declares no cost gets a thread.
_INLINE_CPU_SECONDS = 0.001


@dataclass(frozen=True)
class CatalogTool:
    """A catalog tool, mounted: its entry, its capability and what surfaces serve for it."""

    entry: ToolEntry
    capability: ToolCapability
    definition: ToolDefinition

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.entry.name

    @property
    def action(self) -> str:
        """The action a surface call runs: the tool's primary action."""
        return self.capability.primary_action()

    @property
    def is_async(self) -> bool:
        """Whether the action is a coroutine (it then runs on the event loop, cancellable)."""
        return self.capability.actions()[self.action].is_async

    @property
    def runs_inline(self) -> bool:
        """Whether a synchronous call is cheap and pure enough to run without a worker thread."""
        spec = self.capability.spec
        declared = spec.cost_model.cpu_seconds
        return not self.definition.side_effecting and 0 < declared < _INLINE_CPU_SECONDS

    def catalog_record(self) -> dict[str, Any]:
        """The tool as seed 004's catalog lists it."""
        spec = self.capability.spec
        return {
            "tool_id": spec.tool_id,
            "name": spec.name,
            "version": spec.version,
            "description": spec.description,
            "input_schema": self.capability.actions()[self.action].input_schema,
            "output_schema": spec.outputs_schema,
            "required_capabilities": list(spec.required_capabilities),
            "required_capability": spec.required_capabilities[0],
            "policy_tags": list(spec.policy_tags),
            "deterministic": spec.deterministic,
            "side_effecting": self.definition.side_effecting,
        }


@dataclass(frozen=True)
class Caller:
    """Who is calling, and what they tell the gate about a side-effecting call."""

    agent_id: str = "anonymous"
    rationale: str | None = None
    rollback_plan: str | None = None
    evidence: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CallResult:
    """A tool's result; for a governed call also the verdict and the recorded outcome."""

    result: Any
    verdict: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None


class LocalToolHost:
    """Every planner-visible catalog tool, mounted in this process."""

    def __init__(
        self,
        entries: Mapping[str, ToolEntry] | None = None,
        *,
        kernels: KernelProvider | None = None,
        timeout_seconds: float = 30.0,
        max_argument_bytes: int = 256 * 1024,
    ) -> None:
        self._entries = dict(entries) if entries is not None else None
        self._tools: dict[str, CatalogTool] | None = None
        self.kernels = kernels or KernelProvider()
        self.timeout_seconds = timeout_seconds
        self.max_argument_bytes = max_argument_bytes

    @property
    def entries(self) -> dict[str, ToolEntry]:
        """The catalog's entries, read on first use."""
        if self._entries is None:
            self._entries = load_registry()
        return self._entries

    def tools(self) -> dict[str, CatalogTool]:
        """Every planner-visible tool, mounted (imported and instantiated once)."""
        if self._tools is None:
            self._tools = {name: self._mount(entry) for name, entry in planner_visible(self.entries).items()}
        return self._tools

    def tool(self, name: str) -> CatalogTool:
        """The mounted tool called ``name``, or UnknownToolError listing what exists."""
        tools = self.tools()
        if name not in tools:
            get_entry(name, planner_visible(self.entries))
        return tools[name]

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool as seed 004's catalog lists it, in name order."""
        return [self.tools()[name].catalog_record() for name in sorted(self.tools())]

    async def call(self, name: str, arguments: Any, caller: Caller | None = None) -> CallResult:
        """Validate and run ``name``'s primary action; govern it when it is side-effecting."""
        tool = self.tool(name)
        checked = self.check_arguments(arguments)
        if not tool.definition.side_effecting:
            return CallResult(result=await self.execute(tool, checked))
        from colony.surfaces.governance import governed_call

        return await governed_call(self, tool, checked, caller or Caller())

    def check_arguments(self, arguments: Any) -> dict[str, Any]:
        """The arguments as a dict, refused when not a JSON object or over the size cap."""
        if not isinstance(arguments, Mapping):
            raise ToolInputError(
                f"tool arguments must be a JSON object, got {type(arguments).__name__}",
                errors=[FieldError(field="tool_args", message="not a JSON object", expected="object")],
            )
        size = _json_size(arguments)
        if size > self.max_argument_bytes:
            raise PayloadTooLargeError(
                f"tool arguments are {size} bytes encoded; the cap is {self.max_argument_bytes} bytes"
            )
        return dict(arguments)

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any]) -> Any:
        """Run the tool's action under the per-call timeout; foreign failures become ToolExecutionError.

        A cheap synchronous tool runs directly on the event loop, where no timeout
        could interrupt it anyway; anything else is awaited (async) or sent to a
        worker thread, under the timeout.
        """
        try:
            if tool.runs_inline and not tool.is_async:
                return await tool.capability.invoke(tool.action, arguments)
            with anyio.fail_after(self.timeout_seconds):
                if tool.is_async:
                    return await tool.capability.invoke(tool.action, arguments)
                method = tool.capability.bound_action(tool.action)
                return await anyio.to_thread.run_sync(functools.partial(method, **arguments), abandon_on_cancel=True)
        except TimeoutError:
            raise CallTimeoutError(f"{tool.name} did not finish within {self.timeout_seconds:g} s") from None
        except ColonyError:
            raise
        except Exception as error:  # a tool's own bug reaches the caller as an answer, not a traceback
            raise ToolExecutionError(f"{tool.name} failed: {type(error).__name__}: {error}") from error

    def _mount(self, entry: ToolEntry) -> CatalogTool:
        cls = resolve_capability(entry)
        clashes = sorted(
            set(cls.actions()[cls.primary_action()].input_schema.get("properties", {}))
            & ({IDENTITY_ARGUMENT} | set(GOVERNANCE_PROPERTIES))
        )
        if clashes:
            raise CatalogError(f"{entry.name}: argument name(s) {clashes} are reserved for the caller's identity")
        return CatalogTool(entry=entry, capability=cls(), definition=served_definition(cls))


def _json_size(value: Any) -> int:
    return len(json.dumps(value, default=str))
