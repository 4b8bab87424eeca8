"""Assembly: an AgentSpec's capabilities mounted, and the menu its model is offered.

Per-agent tool text (``tool_overrides``) and the operator's approval decision
(``tool_approval``) are resolved once per action into a ``Layer`` over the
capabilities' own menu (applied to the model's tools by pydantic-ai's wrapper
toolsets, see ``toolset.colony_toolset``, and to ``Agent.menu`` the same way),
keyed by stable ids: an action id (``tool:unit_convert.convert_units``) or a
tool id (``tool:unit_convert``), which means the tool's primary action for a
rename and, for approval, every action of the tool that changes something (is
side-effecting or costs): a tool-level approval never governs a read such as
``check_preconditions``, and one naming a tool with only reads is an error (name
the action id to make a person approve a read). The operator's setting beats the
code's ``side_effecting`` flag.

An agent names catalog tools only, and every call it makes goes through the
runtime's one pipeline as the agent's own principal (holding exactly the
capability tokens its tools require): a side-effecting call passes the gate,
and ``tool_approval: required`` holds a call for a person even when the gate
would run it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from colony.agents.spec import AgentSpec, Approval
from colony.capability import ActionDescription, AgentCapability, ToolCapability, action_menu
from colony.errors import AgentSpecError, ColonyError, ToolUnavailableError, UnknownToolError
from colony.runtime import GOVERNANCE_PROPERTIES, CallOutcome, CallRequest, Principal, Runtime
from colony.telemetry.surfaces import surface_span

__all__ = ["Agent", "Layer", "assemble"]


@dataclass(frozen=True)
class Layer:
    """What the agent's spec makes of one of its actions, over the capability's own menu entry."""

    #: The name the model calls (an override's), None to keep the action's own.
    name: str | None
    #: The text the model reads (an override's), None to keep the action's own.
    description: str | None
    #: Whether the menu marks the action for a person: the operator's setting, else its side effects.
    needs_approval: bool
    #: Whether the operator's spec demands a person's approval (not merely the default).
    approval_required: bool
    #: Whether a call passes the gate: the tool changes the world (or costs), or a person must approve it.
    governed: bool

    def schema(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The input schema the model fills: a governed action asks for the gate's case beside its arguments."""
        if not self.governed:
            return dict(schema)
        properties = dict(schema.get("properties", {}))
        cased = properties | {key: value for key, value in GOVERNANCE_PROPERTIES.items() if key not in properties}
        return {**schema, "properties": cased}

    def apply(self, entry: ActionDescription) -> ActionDescription:
        """The capability's entry as this agent's model sees it."""
        return entry.model_copy(
            update={
                "name": self.name or entry.name,
                "description": self.description or entry.description,
                "input_schema": self.schema(entry.input_schema),
                "needs_approval": self.needs_approval,
            }
        )


class Agent:
    """A spec with its capabilities mounted: the menu and the way to call it."""

    def __init__(self, spec: AgentSpec, capabilities: Iterable[AgentCapability], runtime: Runtime) -> None:
        self.spec = spec
        self.runtime = runtime
        self.capabilities = list(capabilities)
        self.principal = Principal.of(
            spec.name,
            {
                token
                for capability in self.capabilities
                if isinstance(capability, ToolCapability)
                for token in capability.spec.required_capabilities
            },
        )
        self._check_override_keys()
        # The mounts and the spec never change, so the layers and the full menu (and its name check) are built once.
        self.layers: Mapping[str, Layer] = MappingProxyType(
            {entry.action_id: self._layer(entry) for entry in action_menu(self.capabilities)}
        )
        self._menu = self.menu()
        self._by_name = {entry.name: entry for entry in self._menu}
        self._catalog_generation = -1
        self._available_tools: dict[str, dict[str, str]] = {}

    @property
    def name(self) -> str:
        """The agent's id."""
        return self.spec.name

    @property
    def available_tools(self) -> dict[str, dict[str, str]]:
        """Seed 000 step 3: the catalog as a planner sees it now, by tool name (stubs left out).

        Re-projected whenever the registry file changed, so a long-running agent sees a tool
        added or removed without restarting. The agent's own mounts are fixed at assembly;
        a mounted tool removed from the catalog is refused when called.
        """
        self._refresh_available_tools()
        return self._available_tools

    def _refresh_available_tools(self) -> bool:
        """Project the runtime's catalog into ``available_tools`` if it changed; whether it did."""
        tools = self.runtime.catalog.tools  # re-reads the registry file if it changed
        generation = self.runtime.catalog.generation
        if generation == self._catalog_generation:
            return False
        self._available_tools = {
            name: {
                "purpose": tool.entry.purpose,
                "capability": tool.entry.capability,
                "capability_fqn": tool.entry.capability_fqn,
                "version": tool.cls.spec.version,
            }
            for name, tool in sorted(tools.items())
        }
        self._catalog_generation = generation
        return True

    def menu(
        self, include_tags: Iterable[str] | None = None, exclude_tags: Iterable[str] | None = None
    ) -> list[ActionDescription]:
        """Every action the model is offered, renamed, reworded and approval-marked."""
        menu = [
            self.layers[entry.action_id].apply(entry)
            for entry in action_menu(self.capabilities, include_tags, exclude_tags)
        ]
        names = [entry.name for entry in menu]
        clashes = sorted({name for name in names if names.count(name) > 1})
        if clashes:
            raise AgentSpecError(f"agent {self.name!r}: tool_overrides give two actions the name(s) {clashes}")
        return menu

    def lookup(self, menu_name: str) -> tuple[AgentCapability, ActionDescription]:
        """The capability and menu entry the model means by ``menu_name``."""
        entry = self._by_name.get(menu_name)
        if entry is None:
            raise UnknownToolError(f"agent {self.name!r} has no action {menu_name!r}")
        capability = next(c for c in self.capabilities if c.capability_name() == entry.capability)
        return capability, entry

    async def call(self, menu_name: str, arguments: Mapping[str, Any] | None = None, **case: Any) -> Any:
        """Run the action the model called by its menu name, through the governed pipeline, as this agent.

        ``case`` is the gate's reading of a governed call (see ``outcome``).

        Returns:
            The action's result; a refused or held call raises ActionNotExecutedError with the verdict.
        """
        return (await self.outcome(menu_name, arguments, **case)).raise_for_status().result

    async def outcome(
        self,
        menu_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        rationale: str | None = None,
        rollback_plan: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        approval_id: str | None = None,
    ) -> CallOutcome:
        """The whole outcome of a call (status, verdict, record), as ``call`` sees it before raising.

        A held call's outcome names its approval request; the same call with ``approval_id``
        runs once a person approved it.
        """
        capability, entry = self.lookup(menu_name)
        request = CallRequest(
            tool=capability.capability_name(),
            arguments=dict(arguments or {}),
            action=entry.action,
            rationale=rationale,
            rollback_plan=rollback_plan,
            evidence=evidence,
            approval_required=self._approval_required(entry),
            approval_id=approval_id,
        )
        with surface_span(f"agent {self.name} calls {menu_name}", "agent", values={"colony.agent": self.name}):
            return await self.runtime.call(request, self.principal)

    def _approval_required(self, entry: ActionDescription) -> bool:
        """Whether the operator's spec demands a person's approval for this action (not merely the default)."""
        return self.layers[entry.action_id].approval_required

    def _mount(self, entry: ActionDescription) -> tuple[AgentCapability, str]:
        """The mounted capability behind a menu entry, and its id."""
        capability_id = entry.action_id.removesuffix(f".{entry.action}")
        return next(c for c in self.capabilities if c.capability_id() == capability_id), capability_id

    def governed(self, entry: ActionDescription) -> bool:
        """Whether a call of this menu entry passes the gate (it changes the world, or a person must approve it)."""
        return self.layers[entry.action_id].governed

    def retries(self, entry: ActionDescription) -> int:
        """How often the model may retry this action after a bad call (``tool_retries``, by action or tool id)."""
        capability_id = entry.action_id.removesuffix(f".{entry.action}")
        for key in (entry.action_id, capability_id):
            if key in self.spec.tool_retries:
                return self.spec.tool_retries[key]
        return self.spec.default_retries

    async def shutdown(self) -> None:
        """Shut down the runtime's tool instances (containers included)."""
        try:
            await self.runtime.aclose()
        except ColonyError as error:
            raise ColonyError(f"agent {self.name!r}: {error}") from error

    def _ids(self) -> dict[str, tuple[AgentCapability, str | None]]:
        ids: dict[str, tuple[AgentCapability, str | None]] = {}
        for capability in self.capabilities:
            ids[capability.capability_id()] = (capability, None)
            for action in capability.actions():
                ids[f"{capability.capability_id()}.{action}"] = (capability, action)
        return ids

    def _check_override_keys(self) -> None:
        known = self._ids()
        settings = (
            ("tool_overrides", self.spec.tool_overrides),
            ("tool_approval", self.spec.tool_approval),
            ("tool_retries", self.spec.tool_retries),
        )
        for setting, keys in settings:
            unknown = sorted(set(keys) - set(known))
            if unknown:
                raise AgentSpecError(
                    f"agent {self.name!r}: {setting} names {unknown}, which the agent does not have "
                    f"(it has: {sorted(known)})"
                )
        for key, approval in self.spec.tool_approval.items():
            capability, action = known[key]
            if action is None and approval is Approval.REQUIRED and not _changes(capability):
                raise AgentSpecError(
                    f"agent {self.name!r}: tool_approval names {key!r}, whose actions only read; a tool-level "
                    f"approval governs actions that change something (name an action id to approve a read)"
                )

    def _layer(self, entry: ActionDescription) -> Layer:
        capability, capability_id = self._mount(entry)
        primary = isinstance(capability, ToolCapability) and capability.primary_action() == entry.action
        override = self.spec.tool_overrides.get(entry.action_id) or (
            self.spec.tool_overrides.get(capability_id) if primary else None
        )
        approval = _approval(self.spec, capability, entry)
        required = approval is Approval.REQUIRED
        return Layer(
            name=override.name if override and override.name else None,
            description=override.description if override and override.description else None,
            needs_approval=entry.side_effecting if approval is None else required,
            approval_required=required,
            governed=_governed(capability, entry.action, required),
        )


def _approval(spec: AgentSpec, capability: AgentCapability, entry: ActionDescription) -> Approval | None:
    """The operator's setting for one action: its own, else its tool's when the action changes something."""
    own = spec.tool_approval.get(entry.action_id)
    if own is not None or not _governed(capability, entry.action, False):
        return own
    return spec.tool_approval.get(capability.capability_id())


def _changes(capability: AgentCapability) -> bool:
    """Whether any action of the capability changes something (a tool-level approval has work to do)."""
    return any(_governed(capability, action, False) for action in capability.actions())


def _governed(capability: AgentCapability, action: str, approval_required: bool) -> bool:
    """Whether a call passes the gate: the tool changes the world (or costs), or a person must approve it."""
    return approval_required or capability.actions()[action].governed


def assemble(spec: AgentSpec, runtime: Runtime | None = None) -> Agent:
    """Mount the catalog tools ``spec`` names and return the agent, calling through ``runtime``.

    Only catalog names resolve (an agent spec never makes Colony import a path it names),
    and a connected MCP server's name, which mounts each of its tools;
    register a tool with ``upsert_tool`` to make it mountable. A named tool whose catalog
    entry failed to load stops the agent here (ToolUnavailableError naming the tool and
    why), rather than letting it run without a tool its prompt and plan count on.
    """
    runtime = runtime or Runtime()
    capabilities: list[AgentCapability] = []
    references = [
        name
        for reference in spec.capabilities
        for name in (
            runtime.catalog.servers[reference]
            if reference in runtime.catalog.servers and reference not in runtime.catalog.tools
            else (reference,)  # a connected MCP server's name mounts each of its pinned tools
        )
    ]
    for reference in references:
        try:
            tool = runtime.catalog.resolve(reference)
        except UnknownToolError as error:
            raise AgentSpecError(f"agent {spec.name!r}: {error}; an agent names catalog tools only") from None
        except ToolUnavailableError as error:  # the agent would run without a tool its spec counts on
            raise ToolUnavailableError(
                f"agent {spec.name!r} cannot start: {error}", tool=error.tool, reason=error.reason
            ) from None
        capabilities.append(tool.cls())
    seen = [capability.capability_id() for capability in capabilities]
    if len(set(seen)) != len(seen):
        raise AgentSpecError(f"agent {spec.name!r} mounts a capability twice: {seen}")
    return Agent(spec, capabilities, runtime)
