"""A small sandboxed tool with tight limits, for the lifecycle and containment tests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from colony import action_executor
from colony.sandbox import SandboxResult, SandboxToolCapability
from colony.spec import Backend, ResourceRequirements, ToolSpec


class TightShell(SandboxToolCapability):
    """Runs a busybox sh script with 64 MB, 32 processes, a 3 s timeout and 64 KB of output."""

    spec = ToolSpec(
        name="tight_shell",
        capabilities=("run",),
        backend=Backend.SANDBOX,
        side_effecting=True,
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.0625),
        extra={"sandbox": {"timeout_seconds": 3, "output_limit_bytes": 65536, "pids_limit": 32}},
    )
    sandbox_image_role = "busybox"

    @action_executor
    async def run(self, *, script: str, stdin: str | None = None, files: dict[str, str] | None = None) -> SandboxResult:
        """Run a script.

        Args:
            script: Shell script.
            stdin: Standard input.
            files: Input files.

        Returns:
            The sandbox result.
        """
        return await self._exec_in_sandbox(["sh", "-c", script], stdin=stdin, files=files)


def container_of(tool: SandboxToolCapability) -> str | None:
    """The id of the tool's running container, if any."""
    return tool.sandbox_session.container_id(tool._container_plan())


@pytest.fixture(scope="module")
def shared_shell(busybox_image: str) -> Iterator[TightShell]:
    """One TightShell for a whole module, so its tests share (and stress) one container."""
    tool = TightShell()
    yield tool
    asyncio.run(tool.shutdown())


@pytest.fixture
def fresh_shell(busybox_image: str) -> Iterator[TightShell]:
    """A TightShell of the test's own, removed afterwards."""
    tool = TightShell()
    yield tool
    asyncio.run(tool.shutdown())


def run(tool: TightShell, script: str, **arguments: Any) -> SandboxResult:
    """Call the tool from synchronous test code."""
    result: SandboxResult = asyncio.run(tool.invoke("run", {"script": script, **arguments}))
    return result
