"""SandboxImages: the sandbox role table as a Prefect Block, for deployments."""

from __future__ import annotations

from typing import ClassVar

from prefect.blocks.core import Block
from pydantic import Field

from colony.sandbox.config import DEFAULT_ROLES, ImageRole, SandboxConfig


class SandboxImages(Block):
    """Which Docker image each sandbox role runs, and the limits the role allows.

    A sandboxed tool names a role (``sandbox_image_role = "busybox"``); this block
    maps roles to locally built images (``colony sandbox build``), so one place
    decides what runs where. Without a block, ``COLONY_SANDBOX_IMAGES`` and the
    built-in table apply.

    Example:
        Load a saved block and give its roles to a tool's sandbox session:
        ```python
        from blocks.sandbox import SandboxImages
        from colony.sandbox import SandboxSession
        from tools.shell_exec import ShellExec

        images = SandboxImages.load("BLOCK_NAME")
        tool = ShellExec(session=SandboxSession(images.sandbox_config()))
        ```
    """

    _block_type_name: ClassVar[str] = "Colony Sandbox Images"
    _block_type_slug: ClassVar[str] = "colony-sandbox-images"
    _description: ClassVar[str] = "Maps Colony sandbox roles to locally built Docker images and their limits."
    # The engine's own account of the isolation the role limits configure.
    _documentation_url: ClassVar[str] = "https://docs.docker.com/engine/security/"

    roles: dict[str, ImageRole] = Field(
        default_factory=lambda: dict(DEFAULT_ROLES),
        description="Role name -> image reference and limits (user, pids, memory and CPU ceilings, tmpfs sizes).",
    )

    def sandbox_config(self) -> SandboxConfig:
        """The role table as the plain configuration ``colony.sandbox`` takes."""
        return SandboxConfig(roles=dict(self.roles))
