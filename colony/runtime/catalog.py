"""The catalog as the runtime sees it: loaded once per process, reloaded when the file changes.

Each reload that changes the tools bumps ``generation`` and calls the ``on_change``
listeners (the runtime retires a removed tool's instance); agents re-project their
``available_tools`` and ``colony mcp`` sends ``tools/list_changed`` when the
generation moves.

Only catalog names resolve: a call never imports a path it was given. Each
planner-visible entry is imported and checked against its class's spec when the
catalog loads. An entry that fails (its module or class is missing, its module
raises at import, it disagrees with its spec) fails alone: it is logged once as a
warning and kept in ``unavailable`` with the reason, a call of it is refused with
ToolUnavailableError, and every other tool keeps serving. A registry file that no
longer loads at all keeps the last good catalog in service (``reload_error`` says why).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from colony.catalog import ToolEntry, check_entry, get_entry, load_registry, planner_visible, registry_path
from colony.errors import CatalogError, ToolUnavailableError, UnknownActionError
from colony.upstream import UpstreamSource

if TYPE_CHECKING:
    from colony.capability import ToolCapability

__all__ = ["Catalog", "CatalogTool", "UnavailableTool"]

_RECHECK_SECONDS = 1.0
logger = logging.getLogger("colony.catalog")


@dataclass(frozen=True)
class CatalogTool:
    """One mountable catalog tool: its entry and its class."""

    entry: ToolEntry
    cls: type[ToolCapability]

    @property
    def name(self) -> str:
        """The tool's catalog name (its spec's name)."""
        return self.entry.name

    @property
    def primary_action(self) -> str:
        """The action a call runs when it names none."""
        return self.cls.primary_action()

    def action(self, name: str | None) -> str:
        """``name`` if the tool has it (the primary action when None), else UnknownActionError."""
        if name is None:
            return self.primary_action
        if name not in self.cls.actions():
            known = ", ".join(sorted(self.cls.actions()))
            raise UnknownActionError(f"{self.name} has no action {name!r} (it has: {known})")
        return name

    def side_effecting(self, action: str) -> bool:
        """The action's own flag, or the tool's when the action declares none (decided with the class)."""
        return self.cls.actions()[action].side_effecting

    def governed(self, action: str) -> bool:
        """Whether a call of ``action`` must pass the gate (decided with the class: ActionDefinition.governed)."""
        return self.cls.actions()[action].governed


@dataclass(frozen=True)
class UnavailableTool:
    """A catalog entry that failed to load: listed with the reason, refused when called."""

    entry: ToolEntry
    reason: str

    @property
    def name(self) -> str:
        """The entry's catalog name."""
        return self.entry.name

    def error(self, context: str = "") -> ToolUnavailableError:
        """The error a call of this tool gets; ``context`` says who asked (an agent, a route)."""
        message = f"{context}tool {self.name!r} is unavailable, its catalog entry failed to load: {self.reason}"
        return ToolUnavailableError(message, tool=self.name, reason=self.reason)


def _upstream_entry(name: str, description: str, capability: str, extra: Mapping[str, Any]) -> ToolEntry:
    server, _, tool = name.partition("__")
    return ToolEntry(
        name=name,
        purpose=description.split("\n", 1)[0][:200],
        location=f"mcp-server:{extra.get('mcp_server', server)}",
        capability=capability,
        capability_fqn=f"mcp:{extra.get('mcp_server', server)}/{extra.get('mcp_tool', tool)}",
    )


class Catalog:
    """The planner-visible catalog tools, resolved by name only."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        entries: Mapping[str, ToolEntry] | None = None,
        upstream: UpstreamSource | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = None if entries is not None else (path or registry_path())
        if upstream is None and entries is None:
            from colony.kernel import KernelSettings

            upstream = UpstreamSource(KernelSettings().home.expanduser())
        #: The connected MCP servers' pinned tools, mounted beside the registry's (``colony.upstream``).
        self.upstream = upstream
        self.servers: Mapping[str, tuple[str, ...]] = MappingProxyType({})
        self._clock = clock
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Catalog], None]] = []
        self._stamp: tuple[Any, ...] | None = None
        self._checked_at = clock()
        self.generation = 0
        self.reload_error: str | None = None
        self._unavailable: Mapping[str, UnavailableTool] = MappingProxyType({})
        self._upstream_problem: str | None = None
        self._tools, self._unavailable = self._mount(dict(entries) if entries is not None else self._read())

    @property
    def tools(self) -> Mapping[str, CatalogTool]:
        """Every planner-visible tool that loaded, by name (re-read first if the registry file changed)."""
        self.refresh()
        return self._tools

    @property
    def unavailable(self) -> Mapping[str, UnavailableTool]:
        """Every planner-visible entry that failed to load, by name, with the reason."""
        self.refresh()
        return self._unavailable

    def resolve(self, name: str) -> CatalogTool:
        """The tool called ``name``; ToolUnavailableError if its entry failed to load, else UnknownToolError."""
        tools = self.tools
        tool = tools.get(name)
        if tool is None:
            broken = self._unavailable.get(name)
            if broken is not None:
                raise broken.error()
            get_entry(name, {tool.name: tool.entry for tool in tools.values()})
        assert tool is not None
        return tool

    def on_change(self, listener: Callable[[Catalog], None]) -> None:
        """Call ``listener`` after every reload that changed the tools (MCP's ``tools/list_changed``)."""
        self._listeners.append(listener)

    def refresh(self, *, force: bool = False, check_now: bool = False) -> bool:
        """Reload when the registry file changed; whether the tools changed.

        The file is checked at most once a second unless ``check_now``; ``force`` reloads even an
        unchanged file.
        """
        if self.path is None or (not (force or check_now) and self._clock() - self._checked_at < _RECHECK_SECONDS):
            return False
        with self._lock:
            self._checked_at = self._clock()
            if self._file_stamp() == self._stamp and not force:
                return False
            try:
                tools, unavailable = self._mount(self._read())
            except Exception as error:  # noqa: BLE001 - keep serving the last good catalog, say why
                self.reload_error = f"{type(error).__name__}: {error}"
                return False
            self.reload_error = None
            # entries and classes (CatalogTool equality), and which entries failed and why
            changed = dict(tools) != dict(self._tools) or dict(unavailable) != dict(self._unavailable)
            self._tools, self._unavailable = tools, unavailable
            if changed:
                self.generation += 1
        if changed:
            for listener in list(self._listeners):
                listener(self)
        return changed

    def _file_stamp(self) -> tuple[Any, ...] | None:
        assert self.path is not None
        upstream = self.upstream.stamp() if self.upstream is not None else None
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size, upstream

    def _read(self) -> dict[str, ToolEntry]:
        assert self.path is not None
        self._stamp = self._file_stamp()
        return load_registry(self.path)

    def _mount(self, entries: dict[str, ToolEntry]) -> tuple[Mapping[str, CatalogTool], Mapping[str, UnavailableTool]]:
        """Import and check each entry on its own: one that fails is set aside with the reason, logged once."""
        tools, unavailable = {}, {}
        for name, entry in planner_visible(entries).items():
            try:
                cls = check_entry(entry)  # imports the class; refuses an entry whose name or key its spec denies
            except CatalogError as error:
                unavailable[name] = UnavailableTool(entry=entry, reason=str(error))
                if self._unavailable.get(name) != unavailable[name]:
                    logger.warning("catalog tool %r is unavailable (the others still serve): %s", name, error)
                continue
            assert cls is not None
            tools[name] = CatalogTool(entry=entry, cls=cls)
        if self.upstream is not None:
            self._mount_upstream(self.upstream, tools, unavailable)
        return MappingProxyType(tools), MappingProxyType(unavailable)

    def _mount_upstream(
        self, upstream: UpstreamSource, tools: dict[str, CatalogTool], unavailable: dict[str, UnavailableTool]
    ) -> None:
        """Add each connected server's pinned tools; a name the registry holds stays the registry's."""
        mounted = upstream.mount()
        if mounted.problem is not None and mounted.problem != self._upstream_problem:
            logger.warning("the MCP servers' tools are not served: %s", mounted.problem)
        self._upstream_problem = mounted.problem
        for name, cls in mounted.tools.items():
            entry = _upstream_entry(name, cls.spec.description, cls.spec.capabilities[0], cls.spec.extra)
            if name in tools or name in unavailable:
                unavailable[name] = UnavailableTool(entry=entry, reason="a built-in tool has this name")
            else:
                tools[name] = CatalogTool(entry=entry, cls=cls)
        for name, reason in mounted.unavailable.items():
            if name not in tools:
                unavailable[name] = UnavailableTool(entry=_upstream_entry(name, "", "", {}), reason=reason)
        self.servers = MappingProxyType({server: tuple(names) for server, names in mounted.servers.items()})
