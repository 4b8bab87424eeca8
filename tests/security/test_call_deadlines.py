"""A governed call that outlives its deadline is killed there, then recorded as what it did; it blocks nobody."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from colony.errors import CallTimeoutError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, Catalog, KernelProvider, Runtime
from tests.security.conftest import CASE

REGISTRY = Path(__file__).resolve().parents[2] / ".colony" / "tool-registry.json"


async def test_a_sandbox_call_past_its_deadline_is_killed_then_recorded_as_what_it_did(
    docker_client: Any, busybox_image: str, tmp_path: Path
) -> None:
    kernel = ColonyKernel(KernelSettings(home=tmp_path))
    kernel.set_trust("builder", 0.9)
    runtime = Runtime(Catalog(REGISTRY), kernels=KernelProvider(kernel), timeout_seconds=8)
    slow = CallRequest("shell_exec", {"script": "sleep 55"}, agent_id="builder", **CASE)  # type: ignore[arg-type]
    quick = CallRequest(
        "shell_exec", {"script": "ps -o args | grep -c 'sleep 5[5]' || true"}, agent_id="builder", **CASE
    )  # type: ignore[arg-type]
    try:
        with anyio.fail_after(30):  # the deadline is 8 s: two slow calls and a quick one finish well inside this
            async with anyio.create_task_group() as group:
                outcomes: list[Any] = []

                async def run(request: CallRequest) -> None:
                    outcomes.append(await runtime.call(request, LOCAL_OPERATOR))

                group.start_soon(run, slow)
                group.start_soon(run, slow)
                group.start_soon(run, quick)
        stopped = [outcome for outcome in outcomes if outcome.result and outcome.result["timed_out"]]
        assert len(stopped) == 2 and all(outcome.status is CallStatus.EXECUTED for outcome in stopped)
        assert all(outcome.result["exit_code"] == 137 for outcome in stopped)
        after = await runtime.call(quick, LOCAL_OPERATOR)
        assert after.status is CallStatus.EXECUTED and after.result["stdout"].strip() == "0"  # nothing left running
        records = [c.actual_outcome for c in kernel.consequence_log("builder")]
        assert sum("ran until its deadline of 8 s and was killed there" in text for text in records) == 2
        assert not any(isinstance(outcome.error, CallTimeoutError) for outcome in outcomes)
    finally:
        await runtime.aclose()
