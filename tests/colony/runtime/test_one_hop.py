"""A governed blocking call runs gate, action and record in one thread, and keeps the executor's deadline."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from colony.errors import CallTimeoutError
from colony.kernel import ColonyKernel, GateVerdict, KernelSettings, Reporter
from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, Catalog, KernelProvider, Runtime
from colony.runtime.executor import BlockingAction, Execution, InProcessExecutor
from colony.runtime.hop import Handoff, Phase
from tests.colony.runtime.conftest import write_registry

MakeRuntime = Callable[..., Runtime]
CASE = {
    "rationale": "Write the nightly figures to their file for the audit trail",
    "rollback_plan": "Delete the written file again",
    "evidence": {"tests": ["tests/colony/runtime/test_one_hop.py"]},
}


def write_later(path: Path, seconds: float) -> CallRequest:
    arguments = {"seconds": seconds, "path": str(path)}
    return CallRequest("slow_writer", arguments, agent_id="engineer-1", **CASE)  # type: ignore[arg-type]


class SlowGate(ColonyKernel):
    """A kernel whose gate takes ``delay`` seconds to decide (a database another process holds, say)."""

    def __init__(self, delay: float) -> None:
        super().__init__(KernelSettings.from_env())
        self.delay = delay
        self.decided = threading.Event()

    def propose_action(self, request: Any) -> GateVerdict:
        threading.Event().wait(self.delay)
        try:
            return super().propose_action(request)
        finally:
            self.decided.set()


def slow_gate_runtime(tmp_path: Path, delay: float, timeout: float) -> tuple[Runtime, SlowGate]:
    kernel = SlowGate(delay)
    kernel.set_trust("engineer-1", 0.9)
    catalog = Catalog(write_registry(tmp_path / "repo", ["slow_writer"]))
    return Runtime(catalog, kernels=KernelProvider(kernel), timeout_seconds=timeout), kernel


@pytest.fixture
def turned_away(monkeypatch: pytest.MonkeyPatch) -> dict[Phase, threading.Event]:
    """Set, per phase, when the hop's thread asked to move on to it and was told the loop had given up."""
    events = {phase: threading.Event() for phase in Phase}
    move = Handoff.move

    def watched(self: Handoff, phase: Phase, **options: Any) -> bool:
        moved = move(self, phase, **options)
        if not moved:
            events[phase].set()
        return moved

    monkeypatch.setattr(Handoff, "move", watched)
    return events


async def wait_for(path: Path) -> None:
    with anyio.fail_after(30):
        while not path.exists():
            await anyio.sleep(0.05)


async def test_an_action_past_its_deadline_is_answered_timed_out_and_recorded_once(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path, turned_away: dict[Phase, threading.Event]
) -> None:
    kernel.set_trust("engineer-1", 0.9)
    late = write_later(tmp_path / "late", 1.0)  # still running a grace (0.2 s) past its deadline
    outcome = await make_runtime(timeout_seconds=0.2).call(late, LOCAL_OPERATOR)
    assert outcome.status is CallStatus.FAILED and isinstance(outcome.error, CallTimeoutError)
    assert outcome.record is not None and outcome.verdict and outcome.verdict["decision"] == "execute"
    await wait_for(tmp_path / "late")  # a thread cannot be killed: the action finishes after the answer
    # the thread, done with the action, was told the loop answered and recorded it: it writes no record
    assert await anyio.to_thread.run_sync(turned_away[Phase.RECORDING].wait, 30)
    [consequence] = kernel.consequence_log("engineer-1")
    assert "timed out, and was killed at its deadline" in consequence.actual_outcome
    assert consequence.consequence_id == outcome.record["consequence_id"]


async def test_an_action_that_answers_within_the_grace_is_recorded_as_done_with_its_overspend(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.9)
    outcome = await make_runtime(timeout_seconds=0.5).call(write_later(tmp_path / "late", 0.7), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.EXECUTED and (tmp_path / "late").exists()
    assert outcome.record is not None and outcome.record["overspent"]["runtime_seconds"] > 0.1
    [consequence] = kernel.consequence_log("engineer-1")
    assert consequence.tests_passed and "[overspent: runtime_seconds" in consequence.actual_outcome


async def test_an_action_that_fails_is_recorded_as_failed(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.9)
    missing = tmp_path / "no-such-directory" / "file"
    outcome = await make_runtime().call(write_later(missing, 0), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.FAILED and "FileNotFoundError" in str(outcome.error)
    [consequence] = kernel.consequence_log("engineer-1")
    assert "failed: slow_writer failed: FileNotFoundError" in consequence.actual_outcome
    assert not consequence.tests_passed and outcome.record is not None
    assert consequence.reported_by is Reporter.RUNTIME


async def test_the_deadline_starts_with_the_action_not_with_the_gate(tmp_path: Path) -> None:
    runtime, kernel = slow_gate_runtime(tmp_path, delay=1.0, timeout=0.5)  # the gate alone outlasts the deadline
    try:
        outcome = await runtime.call(write_later(tmp_path / "written", 0), LOCAL_OPERATOR)
        assert outcome.status is CallStatus.EXECUTED, outcome.error
        assert (tmp_path / "written").read_text() == "written"
        [consequence] = kernel.consequence_log("engineer-1")
        assert "executed successfully" in consequence.actual_outcome
    finally:
        await runtime.aclose()


async def test_a_caller_that_leaves_while_the_gate_decides_never_runs_the_action(
    tmp_path: Path, turned_away: dict[Phase, threading.Event]
) -> None:
    runtime, kernel = slow_gate_runtime(tmp_path, delay=0.5, timeout=5)
    try:
        with anyio.move_on_after(0.1) as scope:
            await runtime.call(write_later(tmp_path / "never", 0), LOCAL_OPERATOR)
        assert scope.cancelled_caught
        # the thread, done with the gate, was told the caller left: it never starts the action
        assert await anyio.to_thread.run_sync(turned_away[Phase.RUNNING].wait, 30)
        assert not (tmp_path / "never").exists()
        assert kernel.consequence_log("engineer-1") == []
        assert kernel.proposal_counts("engineer-1").total == 1  # judged, held open until its reservation expires
    finally:
        await runtime.aclose()


class ThreadNoting(ColonyKernel):
    """A kernel that notes the thread each gate, growth and record runs in."""

    def __init__(self) -> None:
        super().__init__(KernelSettings.from_env())
        self.threads: list[tuple[str, int]] = []

    def propose_action(self, request: Any) -> GateVerdict:
        self.threads.append(("gate", threading.get_ident()))
        return super().propose_action(request)

    def reserve_runtime(self, proposal_id: str, seconds: float) -> float | None:
        self.threads.append(("reserve", threading.get_ident()))
        return super().reserve_runtime(proposal_id, seconds)

    def record_outcome(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(("record", threading.get_ident()))
        return super().record_outcome(*args, **kwargs)


class PluggedIn:
    """An executor a caller plugs in, which offers its actions as plain calls like this process's own."""

    def __init__(self, inner: InProcessExecutor) -> None:
        self.inner = inner
        self.timeout_seconds = inner.timeout_seconds
        self.ran_in: list[int] = []

    async def run(self, tool: Any, action: str, arguments: dict[str, Any], authorization: Any) -> Execution:
        return await self.inner.run(tool, action, arguments, authorization)

    def blocking(self, tool: Any, action: str) -> BlockingAction | None:
        plain = self.inner.blocking(tool, action)
        if plain is None:
            return None

        def noted(arguments: dict[str, Any], authorization: Any) -> Any:
            self.ran_in.append(threading.get_ident())
            return plain(arguments, authorization)

        return noted


async def test_an_executor_that_offers_plain_calls_gets_gate_action_and_record_in_one_thread(tmp_path: Path) -> None:
    kernel = ThreadNoting()
    kernel.set_trust("engineer-1", 0.9)
    catalog = Catalog(write_registry(tmp_path / "repo", ["slow_writer"]))
    runtime = Runtime(catalog, kernels=KernelProvider(kernel))
    plugged = PluggedIn(InProcessExecutor(runtime.pool))
    runtime.governor.executor = plugged
    try:
        outcome = await runtime.call(write_later(tmp_path / "written", 0), LOCAL_OPERATOR)
        assert outcome.status is CallStatus.EXECUTED and outcome.record is not None
        threads = {thread for _, thread in kernel.threads} | set(plugged.ran_in)
        assert [step for step, _ in kernel.threads] == ["gate", "record"]  # the runtime grew with the verdict
        assert len(threads) == 1 and plugged.ran_in  # one hop: the gate, the action and the record
    finally:
        await runtime.aclose()
