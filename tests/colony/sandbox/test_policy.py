"""Hardening defaults, limits taken from the spec, and the overrides only a spec can ask for."""

from __future__ import annotations

from typing import Any

import pytest

from colony import action_executor
from colony.sandbox import SandboxToolCapability
from colony.sandbox.config import ImageRole
from colony.sandbox.policy import plan_container
from colony.spec import ResourceRequirements, ToolSpec

ROLE = ImageRole(image="img:1", max_memory_gb=1.0, max_vcpus=2)


def _spec(**fields: Any) -> ToolSpec:
    return ToolSpec(name="t", capabilities=("go",), **fields)


def test_defaults_are_locked_down() -> None:
    kwargs = plan_container("r", ROLE, _spec()).create_kwargs()
    assert kwargs["network_mode"] == "none"
    assert kwargs["read_only"] is True
    assert kwargs["cap_drop"] == ["ALL"]
    assert kwargs["security_opt"] == ["no-new-privileges:true"]
    assert kwargs["pids_limit"] == 64
    assert kwargs["user"] == "65533:65533"  # the idle main process; commands run as 65534
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == 2**29  # 0.5 GB default, no swap
    assert "size=16m" in kwargs["tmpfs"]["/tmp"]


def test_limits_come_from_resource_requirements_within_the_role() -> None:
    plan = plan_container("r", ROLE, _spec(resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.25)))
    assert (plan.memory_bytes, plan.nano_cpus) == (2**28, 10**9)
    capped = plan_container("r", ROLE, _spec(resource_requirements=ResourceRequirements(min_vcpus=4, min_memory_gb=8)))
    assert (capped.memory_bytes, capped.nano_cpus) == (2**30, 2 * 10**9)


def test_spec_extra_overrides() -> None:
    spec = _spec(extra={"sandbox": {"network": "bridge", "read_only_root": False, "pids_limit": 200}})
    kwargs = plan_container("r", ROLE, spec).create_kwargs()
    assert (kwargs["network_mode"], kwargs["read_only"], kwargs["pids_limit"]) == ("bridge", False, 200)


def test_unknown_override_fails_at_class_creation() -> None:
    with pytest.raises(TypeError, match=r"spec.extra\['sandbox'\].privileged"):

        class Bad(SandboxToolCapability):
            spec = _spec(extra={"sandbox": {"privileged": True}})
            sandbox_image_role = "busybox"

            @action_executor
            async def go(self) -> dict[str, Any]:
                """Go."""
                return {}


def test_a_role_is_required() -> None:
    with pytest.raises(TypeError, match="sandbox_image_role"):

        class NoRole(SandboxToolCapability):
            spec = _spec()

            @action_executor
            async def go(self) -> dict[str, Any]:
                """Go."""
                return {}


def test_the_output_cap_follows_the_sandbox_output_limit() -> None:
    from colony.sandbox.capability import sandbox_output_bytes
    from tools.shell_exec import ShellExec

    class Wide(SandboxToolCapability):
        spec = _spec(extra={"sandbox": {"output_limit_bytes": 4 << 20}})
        sandbox_image_role = "busybox"

        @action_executor
        async def go(self) -> dict[str, Any]:
            """Go."""
            return {}

    class Declared(Wide):
        max_output_bytes = 5000

    # Three streams at the limit, every byte a 6-byte JSON escape: the sandbox's own cut comes first.
    assert Wide.max_output_bytes == sandbox_output_bytes(4 << 20) == 3 * 6 * (4 << 20) + (64 << 10)
    assert ShellExec.max_output_bytes == sandbox_output_bytes(1 << 20)
    assert Declared.max_output_bytes == 5000
