"""The hardening every sandbox container gets, and the few knobs a tool's spec may turn.

By default a container has no network, a read-only root filesystem (scratch on
small tmpfs mounts only), every Linux capability dropped, no-new-privileges, a
pids limit, memory and CPU limits from ``spec.resource_requirements`` (capped by
the role), and a non-root user. A tool relaxes one of these only by saying so in
its spec: ``spec.extra["sandbox"]`` is validated as ``SandboxOverrides`` when the
class is created, so a typo fails at import, not at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from docker.types import DriverConfig, Mount
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colony.sandbox.config import ImageRole
from colony.spec import ToolSpec

__all__ = [
    "DEFAULT_OUTPUT_LIMIT_BYTES",
    "DEFAULT_TIMEOUT_SECONDS",
    "EXTRA_KEY",
    "WORK_ROOT",
    "ContainerPlan",
    "SandboxOverrides",
    "plan_container",
]

EXTRA_KEY = "sandbox"
WORK_ROOT = "/work"
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_OUTPUT_LIMIT_BYTES = 1 << 20
_GB = 1 << 30


class SandboxOverrides(BaseModel):
    """What a tool's ``spec.extra["sandbox"]`` may change; anything else is refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    network: Literal["none", "bridge"] = Field(
        default="none", description="'bridge' gives the container outbound network; default none."
    )
    read_only_root: bool = Field(default=True, description="False makes the root filesystem writable.")
    pids_limit: int | None = Field(default=None, ge=8, description="Replaces the role's pids limit.")
    timeout_seconds: float = Field(
        default=DEFAULT_TIMEOUT_SECONDS, gt=0, le=3600, description="Default wall-clock limit of one call."
    )
    output_limit_bytes: int = Field(
        default=DEFAULT_OUTPUT_LIMIT_BYTES,
        ge=1024,
        le=64 << 20,
        description="Most bytes kept of stdout, of stderr and of the output files; a run is stopped as soon as "
        "its stdout passes it, or its stderr passes three times it (stderr also carries the output files).",
    )


def overrides_of(spec: ToolSpec) -> SandboxOverrides:
    """The spec's sandbox overrides, or a TypeError naming the bad key."""
    try:
        return SandboxOverrides.model_validate(spec.extra.get(EXTRA_KEY, {}))
    except ValidationError as error:
        detail = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in detail["loc"]) or "<root>"
        raise TypeError(f"{spec.name}: spec.extra[{EXTRA_KEY!r}].{where}: {detail['msg']}") from None


@dataclass(frozen=True)
class ContainerPlan:
    """Everything that decides how one sandbox container is created; containers are shared per plan."""

    role: str
    image: str
    user: str
    keeper_user: str
    memory_bytes: int
    nano_cpus: int
    pids_limit: int
    network: str
    read_only_root: bool
    work_mb: int
    tmp_mb: int
    max_containers: int
    max_per_caller: int

    def create_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.containers.create`` (the session adds the owner labels)."""
        work = Mount(
            target=WORK_ROOT,
            source=None,
            type="volume",
            driver_config=DriverConfig(
                "local", {"type": "tmpfs", "device": "tmpfs", "o": f"size={self.work_mb}m,mode=0777"}
            ),
        )
        return {
            "image": self.image,
            "init": True,
            "user": self.keeper_user,
            "network_mode": self.network,
            "read_only": self.read_only_root,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true"],
            "pids_limit": self.pids_limit,
            "mem_limit": self.memory_bytes,
            "memswap_limit": self.memory_bytes,
            "nano_cpus": self.nano_cpus,
            "tmpfs": {"/tmp": f"size={self.tmp_mb}m,mode=1777,noexec,nosuid,nodev"},
            "mounts": [work],
            "working_dir": WORK_ROOT,
            "environment": {"HOME": "/tmp", "TMPDIR": "/tmp"},
            "command": ["sleep", "2147483647"],
        }


def plan_container(role_name: str, role: ImageRole, spec: ToolSpec) -> ContainerPlan:
    """The container a tool with ``spec`` gets for ``role``: the spec's needs within the role's ceilings."""
    overrides = overrides_of(spec)
    needs = spec.resource_requirements
    return ContainerPlan(
        role=role_name,
        image=role.image,
        user=role.user,
        keeper_user=role.keeper_user,
        memory_bytes=int(min(needs.min_memory_gb, role.max_memory_gb) * _GB),
        nano_cpus=int(min(needs.min_vcpus, role.max_vcpus) * 1e9),
        pids_limit=overrides.pids_limit or role.pids_limit,
        network=overrides.network,
        read_only_root=overrides.read_only_root,
        work_mb=role.work_mb,
        tmp_mb=role.tmp_mb,
        max_containers=role.max_containers,
        max_per_caller=role.caller_share,
    )


def limit_warnings(role_name: str, role: ImageRole, spec: ToolSpec) -> list[str]:
    """Where the spec asks for more than the role allows (the call would run with less)."""
    needs = spec.resource_requirements
    warnings = []
    if needs.min_memory_gb > role.max_memory_gb:
        warnings.append(
            f"spec asks for {needs.min_memory_gb:g} GB memory; sandbox role {role_name!r} allows "
            f"{role.max_memory_gb:g} GB"
        )
    if needs.min_vcpus > role.max_vcpus:
        warnings.append(f"spec asks for {needs.min_vcpus} vCPU; sandbox role {role_name!r} allows {role.max_vcpus:g}")
    if needs.gpu is not None:
        warnings.append(f"spec asks for a GPU ({needs.gpu.kind}); sandbox containers get none")
    return warnings
