"""CPU-bound tools run in worker processes: the serving process keeps its GIL, a deadline kills the work."""

from __future__ import annotations

import asyncio
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from colony.errors import (
    CallTimeoutError,
    ColonyError,
    RateLimitedError,
    ToolExecutionError,
    ToolInputError,
    ToolOutputTooLargeError,
)
from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, Principal, Runtime
from colony.runtime.workers import WorkerProcesses
from tests.services import alive

MakeRuntime = Callable[..., Runtime]


async def test_a_server_runs_a_cpu_bound_tool_in_another_process(make_runtime: MakeRuntime) -> None:
    outcome = await make_runtime(isolate_cpu_bound=True).call(CallRequest("spinner", {"seconds": 0.01}), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.EXECUTED
    assert outcome.result["pid"] != os.getpid()


async def test_a_library_runtime_keeps_it_in_this_process(make_runtime: MakeRuntime) -> None:
    outcome = await make_runtime().call(CallRequest("spinner", {"seconds": 0.01}), LOCAL_OPERATOR)
    assert outcome.result["pid"] == os.getpid()


@pytest.mark.slow
async def test_a_cpu_bound_call_past_its_deadline_kills_its_worker(make_runtime: MakeRuntime, tmp_path: Path) -> None:
    pid_file = tmp_path / "worker.pid"
    runtime = make_runtime(timeout_seconds=3, isolate_cpu_bound=True)
    await runtime.call(CallRequest("spinner", {"seconds": 0}), LOCAL_OPERATOR)  # a worker is up: its start is not timed
    with pytest.raises(CallTimeoutError, match=r"spinner did not finish within 3 s"):
        await runtime.call(CallRequest("spinner", {"seconds": 600, "pid_file": str(pid_file)}), LOCAL_OPERATOR)
    pid = int(pid_file.read_text())
    for _ in range(100):  # the kill is sent at the deadline; give the kernel a moment to reap it
        if not alive(pid):
            break
        time.sleep(0.1)
    assert not alive(pid), f"worker {pid} still spins after its call timed out"
    again = await runtime.call(CallRequest("spinner", {"seconds": 0}), LOCAL_OPERATOR)
    assert again.status is CallStatus.EXECUTED  # a fresh worker serves the next call


async def test_a_caller_flooding_cpu_bound_calls_waits_behind_its_own(make_runtime: MakeRuntime) -> None:
    # First come, first served, a flood of costly calls held every worker until it was done,
    # and another caller's quick call waited for all of it (or timed out behind it).
    runtime = make_runtime(isolate_cpu_bound=True)
    workers = runtime.executor.workers = WorkerProcesses(limit=1)  # type: ignore[attr-defined]
    finished: list[str] = []

    async def spin(caller: str, name: str, seconds: float) -> None:
        await runtime.call(CallRequest("spinner", {"seconds": seconds}), Principal.of(caller, ["*"]))
        finished.append(name)

    await spin("flooder", "warm", 0)  # a worker is up: its start is not in the order below
    # The first holds the worker long enough for alice's call to queue on a loaded machine too.
    flood = [asyncio.create_task(spin("flooder", f"flood {n}", 2.0 if n == 0 else 0.3)) for n in range(4)]
    while len(workers.turns.here().waiting.get("flooder", ())) < 3:  # the flood holds the worker, the rest queued
        await asyncio.sleep(0.01)
    await spin("alice", "alice", 0)
    assert finished[1:3] == ["flood 0", "alice"], finished  # served after the flood's first, not its last
    await asyncio.gather(*flood)


async def test_a_workers_errors_arrive_whole(make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(isolate_cpu_bound=True)
    with pytest.raises(ToolInputError) as raised:
        await runtime.call(CallRequest("spinner", {"seconds": "long"}), LOCAL_OPERATOR)
    assert [error.field for error in raised.value.errors] == ["seconds"]
    with pytest.raises(ToolExecutionError, match="spinner failed: RuntimeError: boom"):
        await runtime.call(CallRequest("spinner", {"seconds": 0, "explode": True}), LOCAL_OPERATOR)


@pytest.mark.parametrize(
    "error",
    [
        ToolInputError.for_field("schema", "not a schema", expected="an object"),
        ToolOutputTooLargeError("too big", action="redact_pii", size_bytes=9, limit_bytes=8),
        RateLimitedError("slow down", retry_after_seconds=2.5),
        ToolExecutionError("busy", retryable=True),
    ],
)
def test_colony_errors_survive_pickling(error: ColonyError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error) and copy.to_dict() == error.to_dict()
