"""One principal's long sandbox calls cannot take every container from another's short one (real Docker).

The tool runs through ``Runtime.call``, which names the caller to the container pool;
the busybox role runs at most 4 containers, so one caller may hold 3 of them at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from colony import action_executor
from colony.runtime import CallRequest, Catalog, Principal, Runtime
from colony.sandbox import SandboxResult, SandboxToolCapability
from colony.spec import Backend, ResourceRequirements, ToolSpec

LONG_SECONDS = 20  # alice's calls; bob's must not wait for them
ALICE_SHARE = 3  # all but one of the role's 4 containers
DEADLINE = 60.0  # generous: the machine is shared and containers start slowly


class SandboxScript(SandboxToolCapability):
    """Run a busybox sh script; reads nothing outside its container, so it is not gated."""

    spec = ToolSpec(
        name="sandbox_script",
        capabilities=("run",),
        backend=Backend.SANDBOX,
        side_effecting=False,
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.0625),
    )
    sandbox_image_role = "busybox"

    @action_executor
    async def run(self, *, script: str, timeout_seconds: float) -> SandboxResult:
        """Run a script.

        Args:
            script: Shell script.
            timeout_seconds: How long the call may take, waiting for a container included.

        Returns:
            The sandbox result.
        """
        return await self._exec_in_sandbox(["sh", "-c", script], timeout_seconds=timeout_seconds)


def runtime_with_the_tool(root: Path) -> Runtime:
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True)
    entry = {"name": "sandbox_script", "capability": "run", "capability_fqn": f"{__name__}.SandboxScript"}
    path.write_text(json.dumps({"version": 1, "tools": [entry]}))
    return Runtime(Catalog(path), timeout_seconds=DEADLINE + LONG_SECONDS)


async def test_another_callers_short_call_runs_beside_one_callers_long_ones(busybox_image: str, tmp_path: Path) -> None:
    runtime = runtime_with_the_tool(tmp_path)
    alice, bob = Principal.of("alice", ["tool:*"]), Principal.of("bob", ["tool:*"])

    async def call(principal: Principal, script: str, timeout: float) -> object:
        request = CallRequest(tool="sandbox_script", arguments={"script": script, "timeout_seconds": timeout})
        return (await runtime.call(request, principal)).result

    try:
        long_calls = [
            asyncio.create_task(call(alice, f"sleep {LONG_SECONDS}; echo alice", DEADLINE + LONG_SECONDS))
            for _ in range(4)
        ]
        tool = runtime.pool.instance(SandboxScript)
        plan = tool._container_plan()
        waiting = tool.sandbox_session._held.pool.plans.waiting
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline and not (
            len(tool.sandbox_session.container_ids(plan)) >= ALICE_SHARE
            and len(waiting.get(plan, {}).get("alice", ())) == 1
        ):
            await asyncio.sleep(0.1)  # until alice's share is running and her fourth call waits for it

        # Bob's deadline ends before alice's calls do: he is served from the container she may not take.
        answer = await asyncio.wait_for(call(bob, "echo hi", LONG_SECONDS - 2), timeout=DEADLINE)
        assert answer["stdout"] == "hi\n" and answer["exit_code"] == 0  # type: ignore[index]
        assert not any(task.done() for task in long_calls)

        results = await asyncio.wait_for(asyncio.gather(*long_calls), timeout=DEADLINE + 2 * LONG_SECONDS)
        assert [result["stdout"] for result in results] == ["alice\n"] * 4  # type: ignore[index]
    finally:
        await runtime.aclose()
