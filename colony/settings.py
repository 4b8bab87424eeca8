"""ColonySettings: every setting of a Colony process in one model (kernel, gateway, sandbox, HPC, MCP servers).

A process reads it once, from a Prefect block when one is configured (``blocks.load_settings``)
and from the ``COLONY_*`` environment otherwise (``ColonySettings.from_env``), and hands the
parts to what it builds: the kernel and the gateway take theirs as arguments, and
``use_settings`` makes the sandbox roles and the HPC service this process's defaults for
the tools its pool creates.

Paths on disk (``MACHINE_PATHS``: the kernel's home, the HPC service's token file, the
gateway's JWKS file, the MCP servers file) belong to each machine: a block never keeps them, and every process
reads them from its own environment, so one block serves machines laid out differently.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, SecretStr, TypeAdapter, model_validator

from colony.environment import data_alone
from colony.hpc.defaults import set_default_settings
from colony.hpc.settings import HPCSettings
from colony.kernel import KernelSettings
from colony.policy import PolicySettings
from colony.sandbox.config import SandboxConfig, set_default_config
from colony.surfaces.gateway.settings import GatewaySettings
from colony.upstream.settings import UpstreamSettings
from colony.upstream.source import UpstreamSource

__all__ = ["MACHINE_PATHS", "ColonySettings", "MachinePath", "use_settings"]


@dataclass(frozen=True)
class MachinePath:
    """A setting naming a path on this machine: which part, which field, which variable."""

    part: str
    field: str
    variable: str


MACHINE_PATHS = (
    MachinePath("kernel", "home", "COLONY_HOME"),
    MachinePath("hpc", "tokens_file", "COLONY_HPC_TOKENS_FILE"),
    MachinePath("gateway", "jwks_file", "COLONY_GATEWAY_JWKS_FILE"),
    MachinePath("gateway", "tokens_file", "COLONY_GATEWAY_TOKENS_FILE"),
    MachinePath("upstream", "servers_file", "COLONY_MCP_SERVERS"),
)


class ColonySettings(BaseModel):
    """The kernel's, the gateway's, the sandbox's, the HPC service's and the MCP servers' settings, together."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: KernelSettings = Field(description="Where the kernel keeps its state and the limits it enforces.")
    gateway: GatewaySettings = Field(description="Where the HTTP gateway listens, who may call it, what it caps.")
    sandbox: SandboxConfig = Field(description="The Docker image and limits of each sandbox role.")
    hpc: HPCSettings = Field(description="Where the HPC service is and what it may run on AWS Batch.")
    policy: PolicySettings = Field(
        default_factory=PolicySettings,
        description="Where the operators' Cedar policies are read from (default: policies/ under the Colony home).",
    )
    upstream: UpstreamSettings = Field(
        default_factory=UpstreamSettings,
        description="The third-party MCP servers served and their pinned tools; declared here, they win over "
        "the mcp-servers.json file.",
    )

    @model_validator(mode="wrap")  # type: ignore[arg-type, unused-ignore]  # pydantic-mypy: Never, on a cold cache only
    @classmethod
    def _parts_from_data_alone(cls, data: Any, handler: ModelWrapValidatorHandler[ColonySettings]) -> ColonySettings:
        # A block's document (or a parent's hand-over) is the settings: no COLONY_* variable fills or joins it.
        with data_alone():
            return handler(data)

    @classmethod
    def from_env(cls) -> ColonySettings:
        """Every part from its ``COLONY_*`` variables; a bad one is an error naming the variable."""
        return cls(
            kernel=KernelSettings.from_env(),
            gateway=GatewaySettings.from_env(),
            sandbox=SandboxConfig.from_env(),
            hpc=HPCSettings.from_env(),
            policy=PolicySettings(),
            upstream=UpstreamSettings.from_env(),
        )

    def upstream_source(self) -> UpstreamSource:
        """The MCP servers a runtime on these settings serves: the declared ones, else this home's file."""
        return UpstreamSource.from_settings(self.upstream, self.kernel.home.expanduser())

    def without_machine_paths(self) -> ColonySettings:
        """These settings with every path on disk at its default: what a block keeps."""
        return self._with_paths({path: _default(self, path) for path in MACHINE_PATHS})

    def with_machine_paths(self, environ: Mapping[str, str] = os.environ) -> ColonySettings:
        """These settings with this machine's paths on disk, from ``environ`` (unset: the default)."""
        return self._with_paths({path: _from_environ(self, path, environ) for path in MACHINE_PATHS})

    def _with_paths(self, values: dict[MachinePath, Any]) -> ColonySettings:
        parts: dict[str, dict[str, Any]] = {}
        for path, value in values.items():
            parts.setdefault(path.part, {})[path.field] = value
        return self.model_copy(
            update={part: getattr(self, part).model_copy(update=fields) for part, fields in parts.items()}
        )

    def revealed(self) -> dict[str, Any]:
        """Every value as JSON data, secrets included: for a child process that must run on the same settings."""
        return _reveal(self.model_dump(mode="python"))


def _default(settings: ColonySettings, path: MachinePath) -> Any:
    return type(getattr(settings, path.part)).model_fields[path.field].get_default(call_default_factory=True)


def _from_environ(settings: ColonySettings, path: MachinePath, environ: Mapping[str, str]) -> Any:
    raw = environ.get(path.variable)
    if not raw:
        return _default(settings, path)
    annotation = type(getattr(settings, path.part)).model_fields[path.field].annotation
    return TypeAdapter(annotation).validate_python(raw)


def _reveal(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {key: _reveal(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_reveal(item) for item in value]
    return TypeAdapter(Any).dump_python(value, mode="json")


def use_settings(settings: ColonySettings | None) -> None:
    """Make the sandbox roles and HPC settings of ``settings`` this process's defaults (None: the environment's).

    The tools a pool creates take no arguments, so they read these (``SandboxSession``,
    ``HPCToolCapability``); the kernel and the gateway are handed their parts directly.
    """
    set_default_config(settings.sandbox if settings else None)
    set_default_settings(settings.hpc if settings else None)
