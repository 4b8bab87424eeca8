"""Where a process finds its MCP servers: declared in its settings (a block's), else the servers file.

Precedence: servers declared in the settings win over every file. A ``ColonyConfig`` block
carries them with their pins (``colony blocks save`` copies the servers file and the home's
pins into it), so every worker that loads the block serves the same servers and the same
pinned definitions whatever its own home holds; with declared servers only the declared pins
count. Without them, the servers file (``COLONY_MCP_SERVERS``, else ``mcp-servers.json`` in the
Colony home) and the pins in the home, as ``colony mcp-servers`` writes them. Credentials are
secret kinds here as in the file: a literal token in a declared server's ``env`` or
``headers`` is refused, so no block can keep one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import SettingsConfigDict

from colony.environment import EnvironmentSettings
from colony.errors import SettingsError
from colony.upstream.config import McpServers, load_servers
from colony.upstream.pins import PinnedTool, Pins, PinStore, fingerprint, pins_path

__all__ = ["PinnedDefinition", "UpstreamSettings"]


class PinnedDefinition(BaseModel):
    """One pinned tool definition, as the pins file keeps it; its digest must match it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the definition's canonical JSON.")
    pinned_at: str = Field(description="When an operator pinned it (ISO 8601).")
    definition: dict[str, Any] = Field(description="The tool's name, description, schemas and annotations.")

    @model_validator(mode="after")
    def _intact(self) -> Self:
        if not isinstance(self.definition.get("name"), str):
            raise ValueError("a pinned definition names its tool ('name')")
        if fingerprint(self.definition) != self.sha256:
            raise ValueError(
                f"the pinned definition of {self.definition['name']!r} does not match its sha256 (an edited pin "
                "is no pin): pin the server again with `colony mcp-servers pin` and save the block"
            )
        return self


class UpstreamSettings(EnvironmentSettings):
    """The MCP servers file (``COLONY_MCP_SERVERS``), or servers declared here with their pins.

    ``COLONY_UPSTREAM_SERVERS`` and ``COLONY_UPSTREAM_PINS`` (JSON) declare them from the
    environment; a block declares them in its document.
    """

    model_config = SettingsConfigDict(env_prefix="COLONY_UPSTREAM_", extra="forbid", frozen=True, populate_by_name=True)

    servers_file: Path | None = Field(
        default=None,
        validation_alias="COLONY_MCP_SERVERS",
        description="The mcpServers file, read when no servers are declared here; default: mcp-servers.json "
        "in COLONY_HOME.",
    )
    servers: McpServers | None = Field(
        default=None,
        description="Servers declared here (a block's), served instead of the file's; credentials as "
        "${secret:KIND}, never literal.",
    )
    pins: dict[str, dict[str, PinnedDefinition]] | None = Field(
        default=None,
        description="The declared servers' pinned definitions, by server and tool (the pins file's content); "
        "a tool no pin names is not served.",
    )

    @model_validator(mode="after")
    def _pins_of_declared_servers(self) -> Self:
        if self.pins is not None and self.servers is None:
            raise ValueError("pins are declared without the servers they pin: declare the servers too")
        for server, tools in (self.pins or {}).items():
            for name, pin in tools.items():
                if pin.definition["name"] != name:
                    raise ValueError(f"the pin {server}.{name} holds the definition of {pin.definition['name']!r}")
        return self

    @classmethod
    def from_env(cls) -> UpstreamSettings:
        """The settings from the environment; a bad variable is a SettingsError naming it."""
        try:
            return cls()
        except ValidationError as error:
            problems = "; ".join(
                f"{_variable(item['loc'])}: {str(item['msg']).removeprefix('Value error, ')}"
                for item in error.errors(include_url=False)
            )
            raise SettingsError(f"invalid MCP server settings: {problems}") from None

    def file(self, home: Path) -> Path:
        """The servers file of ``home``, read when no servers are declared here."""
        return self.servers_file.expanduser() if self.servers_file else home / "mcp-servers.json"

    def pinned(self) -> Pins:
        """The declared pins, as the catalog reads them."""
        return Pins(
            {
                server: {
                    name: PinnedTool(definition=pin.definition, sha256=pin.sha256, pinned_at=pin.pinned_at)
                    for name, pin in tools.items()
                }
                for server, tools in (self.pins or {}).items()
            }
        )

    def declaring(self, home: Path) -> UpstreamSettings:
        """These settings with the servers file and the pins of ``home`` declared here: what a block carries.

        Settings that declare servers already are kept as they are; so are they when there is no file.
        """
        path = self.file(home)
        if self.servers is not None or not path.exists():
            return self
        servers = load_servers(path)
        pins = {
            server: {name: PinnedDefinition.model_validate(pin) for name, pin in tools.items()}
            for server, tools in PinStore(pins_path(home)).content().items()
            if server in servers.servers
        }
        return self.model_copy(update={"servers": servers, "pins": pins})


def _variable(location: tuple[int | str, ...]) -> str:
    head, *rest = [str(part) for part in location] or ["*"]
    variable = head if head.startswith("COLONY_") else f"COLONY_UPSTREAM_{head.upper()}"
    return ".".join([variable, *rest])
