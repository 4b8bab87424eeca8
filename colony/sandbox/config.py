"""Image roles: which image a sandbox role runs, and the limits that role allows.

A tool names a role (``sandbox_image_role = "busybox"``), never an image. This
module is the one place a role becomes an image: from ``COLONY_SANDBOX_IMAGES``
(JSON, merged over the built-in table) by default, or from the ``sandbox`` part of
Colony's settings, which a command or flow loaded (from a Prefect block when one is
configured) and chose with ``set_default_config``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from colony.errors import SandboxError, UnknownSandboxRoleError

__all__ = ["DEFAULT_ROLES", "ENV_VARIABLE", "ImageRole", "SandboxConfig", "default_config", "set_default_config"]

ENV_VARIABLE = "COLONY_SANDBOX_IMAGES"


class ImageRole(BaseModel):
    """One role: the image it runs and the ceilings every container of it gets."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    image: str = Field(min_length=1, description="Local image reference, e.g. 'colony-sandbox/busybox:1'.")
    user: str = Field(default="65534:65534", description="UID:GID commands run as; never root.")
    keeper_user: str = Field(
        default="65533:65533",
        description="UID:GID of the container's idle main process. It differs from `user`, so the clean-up "
        "after each call can kill every process a command left behind without stopping the container.",
    )
    pids_limit: int = Field(default=64, ge=8, description="Most processes the container may hold at once.")
    max_memory_gb: float = Field(default=2.0, gt=0, description="Ceiling on the memory a tool's spec may ask for.")
    max_vcpus: float = Field(default=2.0, gt=0, description="Ceiling on the CPUs a tool's spec may ask for.")
    work_mb: int = Field(default=64, ge=1, description="Size of the tmpfs holding the per-call work directories.")
    tmp_mb: int = Field(default=16, ge=1, description="Size of the scratch tmpfs at /tmp.")
    max_containers: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Most containers one session runs at once for a tool of this role: a container serves "
        "one call at a time, so this many calls run side by side and the next waits (until its deadline).",
    )
    max_containers_per_caller: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="Most of those containers one principal's calls hold at once; callers waiting for one are "
        "served in turn, one call each, until their deadlines. Default: all but one (at least one), so another "
        "caller always finds a container.",
    )

    @property
    def caller_share(self) -> int:
        """The containers one caller may hold at once (its setting, else all but one), at most max_containers."""
        share = self.max_containers_per_caller or max(1, self.max_containers - 1)
        return min(share, self.max_containers)

    @model_validator(mode="after")
    def _unprivileged(self) -> ImageRole:
        for name in ("user", "keeper_user"):
            uid = getattr(self, name).split(":", 1)[0]
            if uid in ("", "0", "root"):
                raise ValueError(f"{name} must be a non-root UID:GID, got {getattr(self, name)!r}")
        if self.user.split(":", 1)[0] == self.keeper_user.split(":", 1)[0]:
            raise ValueError("user and keeper_user must be different UIDs")
        return self


DEFAULT_ROLES: dict[str, ImageRole] = {
    "busybox": ImageRole(image="colony-sandbox/busybox:1"),
}


_ROLE_TABLE = TypeAdapter(dict[str, ImageRole])


class SandboxConfig(BaseModel):
    """Every role this process may start a sandbox for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[str, ImageRole] = Field(
        default_factory=lambda: dict(DEFAULT_ROLES), description="Role name to image and limits."
    )

    @classmethod
    def from_env(cls) -> SandboxConfig:
        """The built-in roles, overlaid with ``COLONY_SANDBOX_IMAGES`` (a JSON object) when set."""
        raw = os.environ.get(ENV_VARIABLE, "").strip()
        if not raw:
            return cls()
        try:
            overrides: Any = json.loads(raw)
        except json.JSONDecodeError as error:
            raise SandboxError(f"{ENV_VARIABLE} is not valid JSON: {error.msg} (column {error.colno})") from None
        if not isinstance(overrides, dict):
            raise SandboxError(f"{ENV_VARIABLE} must be a JSON object of role -> {{'image': ...}}")
        try:
            return cls(roles={**DEFAULT_ROLES, **_ROLE_TABLE.validate_python(overrides)})
        except ValidationError as error:
            detail = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in detail["loc"]) or "<role>"
            raise SandboxError(f"{ENV_VARIABLE}: {where}: {detail['msg']}") from None

    def role(self, name: str) -> ImageRole:
        """The role called ``name``, or an error naming it and the roles that exist."""
        try:
            return self.roles[name]
        except KeyError:
            known = ", ".join(sorted(self.roles)) or "none"
            raise UnknownSandboxRoleError(
                f"no sandbox image is configured for role {name!r} (configured roles: {known}); "
                f"add it to {ENV_VARIABLE} or to the sandbox roles of the settings block"
            ) from None


_chosen: SandboxConfig | None = None


def set_default_config(config: SandboxConfig | None) -> None:
    """Make ``config`` the role table of every sandbox session this process opens (None: the environment's)."""
    global _chosen
    _chosen = config


def default_config() -> SandboxConfig:
    """The chosen role table, else ``COLONY_SANDBOX_IMAGES`` over the built-in roles."""
    return _chosen if _chosen is not None else SandboxConfig.from_env()
