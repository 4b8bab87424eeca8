"""The upstream tools as the catalog mounts them: from the servers and the pins, no server started.

The servers and pins are a Colony home's files, or those its settings declare
(``UpstreamSource.from_settings``: a block's, the same on every worker).

Each enabled server's pinned tools become tool classes (``tools.py``). A tool whose
definition cannot be served (a schema that is not JSON Schema, a name every tool has)
is unavailable with the reason, like a broken catalog entry; so is a pinned tool whose
server has since changed its definition (``drifted``), until an operator re-pins it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colony.errors import McpServersFileError
from colony.upstream.config import McpServers, catalog_name, load_servers, servers_path
from colony.upstream.pins import Pins, PinStore, Review, drift_reason, pins_path
from colony.upstream.settings import UpstreamSettings

if TYPE_CHECKING:
    from colony.upstream.tools import UpstreamTool

__all__ = ["Mounted", "UpstreamSource"]


@dataclass(frozen=True)
class Mounted:
    """What the catalog gets from the upstream servers."""

    tools: dict[str, type[UpstreamTool]]
    unavailable: dict[str, str]  # catalog name -> reason
    servers: dict[str, list[str]]  # server -> its catalog names (agent specs may name a server)
    problem: str | None = None  # why the servers file could not be read (no upstream tool then)


class UpstreamSource:
    """The servers file and the pins of one Colony home, or the servers and pins declared instead."""

    def __init__(
        self,
        home: Path,
        *,
        servers_file: Path | None = None,
        declared: McpServers | None = None,
        pins: Pins | None = None,
    ) -> None:
        """``declared`` servers are served instead of the file's, with ``pins`` alone (default: none)."""
        self.servers_file = servers_file or servers_path(home)
        self.declared = declared
        if pins is None:
            pins = Pins() if declared is not None else PinStore(pins_path(home))
        self.pins = pins
        self._lock = threading.Lock()
        self._drifted: dict[str, frozenset[str]] = {}  # server -> its tools whose served definition moved
        self._generation = 0

    @classmethod
    def from_settings(cls, settings: UpstreamSettings, home: Path) -> UpstreamSource:
        """The servers and pins ``settings`` declare, else the servers file they name and the pins of ``home``."""
        if settings.servers is not None:
            return cls(home, declared=settings.servers, pins=settings.pinned())
        return cls(home, servers_file=settings.file(home))

    def stamp(self) -> tuple[Any, ...]:
        """Changes whenever what ``mount`` returns may change."""
        servers = None
        if self.declared is None:
            try:
                stat = self.servers_file.stat()
                servers = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                pass
        return servers, self.pins.stamp(), self._generation

    def servers(self) -> McpServers:
        """The declared servers, else the servers file as it is now."""
        return self.declared if self.declared is not None else load_servers(self.servers_file)

    def mount(self) -> Mounted:
        """Every pinned tool of every enabled server, as a class; the ones that cannot serve, with why."""
        try:
            servers = self.servers()
        except McpServersFileError as error:
            return Mounted(tools={}, unavailable={}, servers={}, problem=str(error))
        tools: dict[str, type[UpstreamTool]] = {}
        unavailable: dict[str, str] = {}
        names: dict[str, list[str]] = {}
        pinned = self.pins.servers()
        for server, config in sorted(servers.servers.items()):
            if config.disabled:
                continue
            for tool_name, pin in sorted(pinned.get(server, {}).items()):
                name = catalog_name(server, tool_name)
                names.setdefault(server, []).append(name)
                if name in tools or name in unavailable:
                    unavailable[name] = f"two tools of MCP server {server!r} are both named {name!r} in Colony"
                    tools.pop(name, None)
                elif tool_name in self._drifted.get(server, ()):
                    unavailable[name] = drift_reason(server)
                else:
                    from colony.upstream.tools import upstream_tool_class  # the MCP SDK, once a tool is pinned

                    try:
                        tools[name] = upstream_tool_class(server, config, pin, observe=self.observe)
                    except (ValueError, TypeError) as error:
                        unavailable[name] = f"MCP server {server!r} tool {tool_name!r} cannot be served: {error}"
        return Mounted(tools=tools, unavailable=unavailable, servers=names)

    def observe(self, server: str, listed: list[dict[str, Any]]) -> Review:
        """What a server listed on (re)connection or ``tools/list_changed``: compared with its pins."""
        review = self.pins.review(server, listed)
        drifted = review.out_of_service
        with self._lock:
            if self._drifted.get(server, frozenset()) != drifted:
                self._drifted[server] = drifted
                self._generation += 1
        return review
