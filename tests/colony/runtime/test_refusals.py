"""Refused calls reach the audit log; a flood of them costs a few entries per kind and window, not one each."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from colony.errors import CapabilityDeniedError, IdentityError
from colony.kernel import ColonyKernel
from colony.runtime import CallRequest, KernelProvider, Principal, Runtime
from colony.runtime.refusals import RefusalRecorder
from tests.colony.kernel.conftest import FakeClock

CONVERT = {"value": 1, "from_unit": "km", "to_unit": "m"}


def refused(kernel: ColonyKernel) -> list[tuple[str, str, str, str, int]]:
    return [
        (e.who, e.on_behalf, e.what, e.verdict, e.detail["count"])
        for e in kernel.audit_entries()
        if e.event == "refused"
    ]


async def test_a_lone_refusal_is_written_at_once(kernel: ColonyKernel) -> None:
    recorder = RefusalRecorder(KernelProvider(kernel), clock=FakeClock())
    recorder.note("beta", None, "call unit_convert", 403, "lacks tool:unit_convert")
    await recorder.flush_if_due()
    assert refused(kernel) == [("beta", "beta", "call unit_convert", "forbidden", 1)]


async def test_a_flood_is_its_first_entry_and_one_count_per_window(kernel: ColonyKernel) -> None:
    clock = FakeClock()
    recorder = RefusalRecorder(KernelProvider(kernel), clock=clock)
    for _second in range(3):
        for _ in range(500):
            recorder.note("beta", None, "call unit_convert", 429, "over the rate")
            await recorder.flush_if_due()
        clock.advance(1.0)
    recorder.flush(final=True)  # the runtime closes
    counts = [count for *_, count in refused(kernel)]
    assert counts == [1, 1499]  # the first at once, the rest of the window as one entry
    assert kernel.verify_audit().ok


async def test_rotating_the_agent_acted_for_is_aggregated_keeping_the_first(kernel: ColonyKernel) -> None:
    clock = FakeClock()
    recorder = RefusalRecorder(KernelProvider(kernel), clock=clock, window_seconds=60.0)
    for index in range(1500):
        recorder.note("beta", f"agent-{index}", "call unit_convert", 403, f"beta cannot act as agent-{index}")
        await recorder.flush_if_due()
        clock.advance(0.0025)  # 1,500 in 3.75 s
    assert [entry[:3] for entry in refused(kernel)] == [("beta", "agent-0", "call unit_convert")]  # written at once
    clock.advance(60.0)
    await recorder.flush_if_due()  # the window closed
    first, rest = (entry for entry in kernel.audit_entries() if entry.event == "refused")
    assert (first.detail["count"], rest.detail["count"]) == (1, 1499)
    assert (rest.who, rest.on_behalf, rest.what) == ("beta", "*", "call unit_convert")
    names = rest.detail["names"]
    assert names["on_behalf"][:2] == ["agent-1", "agent-10"] and names["truncated"] == ["on_behalf"]
    assert "agent-1499" in rest.detail["error"]  # the latest reason


async def test_each_kind_keeps_its_first_entry(kernel: ColonyKernel) -> None:
    clock = FakeClock()
    recorder = RefusalRecorder(KernelProvider(kernel), clock=clock)
    for index in range(20):
        recorder.note("beta", None, "call unit_convert", 403, "lacks tool:unit_convert")
        recorder.note("beta", None, "read approval a-1", 403, "not its approval")
        recorder.note("anonymous", None, f"GET /v1/approvals/x{index}", 401, "no token", client="10.0.0.1")
        recorder.note("anonymous", None, f"GET /v1/approvals/x{index}", 401, "no token", client="10.0.0.2")
    recorder.flush(final=True)
    entries = [(e.who, e.what, e.detail.get("client"), e.detail["count"]) for e in kernel.audit_entries()]
    assert entries[:4] == [
        ("beta", "call unit_convert", None, 1),
        ("beta", "read approval a-1", None, 1),
        ("anonymous", "GET /v1/approvals/x0", "10.0.0.1", 1),
        ("anonymous", "GET /v1/approvals/x0", "10.0.0.2", 1),
    ]
    assert sorted(entries[4:]) == [
        ("anonymous", "GET *", "10.0.0.1", 19),
        ("anonymous", "GET *", "10.0.0.2", 19),
        ("beta", "call unit_convert", None, 19),
        ("beta", "read approval a-1", None, 19),
    ]


async def test_the_next_refusal_after_a_window_closes_it_and_opens_another(kernel: ColonyKernel) -> None:
    clock = FakeClock()
    recorder = RefusalRecorder(KernelProvider(kernel), clock=clock, window_seconds=10.0)
    for _ in range(3):
        recorder.note("beta", None, "call unit_convert", 429, "over the rate")
    clock.advance(11.0)
    recorder.note("beta", None, "call unit_convert", 429, "over the rate")
    assert recorder.flush() == 3  # the first, the window's other two, the first of the next window
    assert [count for *_, count in refused(kernel)] == [1, 2, 1]


async def test_callers_past_the_bound_are_counted_under_one_overflow_entry(kernel: ColonyKernel) -> None:
    recorder = RefusalRecorder(KernelProvider(kernel), clock=FakeClock(), max_keys=3)
    for address in range(50):  # an attacker cycling source addresses
        recorder.note("anonymous", None, "POST /v1/tool_call", 401, "no token", client=f"10.0.0.{address}")
    assert recorder.flush(final=True) == 4
    entries = list(kernel.audit_entries())
    assert [entry.detail.get("client") for entry in entries[:3]] == ["10.0.0.0", "10.0.0.1", "10.0.0.2"]
    overflow = entries[3]
    assert (overflow.who, overflow.verdict, overflow.detail["count"]) == ("*", "unauthenticated", 47)
    assert len(overflow.detail["callers"]) == 47


async def test_counts_survive_a_write_that_fails(kernel: ColonyKernel) -> None:
    class Unreachable(KernelProvider):
        def get(self) -> ColonyKernel:
            raise ConnectionError("the kernel database is down")

    recorder = RefusalRecorder(Unreachable(), clock=FakeClock())
    recorder.note("beta", None, "call unit_convert", 429, "over the rate")
    assert recorder.flush() == 0
    recorder.kernels = KernelProvider(kernel)
    recorder.note("beta", None, "call unit_convert", 429, "over the rate")
    assert recorder.flush(final=True) == 2
    assert refused(kernel) == [
        ("beta", "beta", "call unit_convert", "rate_limited", 1),
        ("beta", "beta", "call unit_convert", "rate_limited", 1),
    ]


async def test_runtime_call_counts_permission_and_identity_refusals(
    make_runtime: Callable[..., Runtime], kernel: ColonyKernel
) -> None:
    runtime = make_runtime(["unit_convert"])
    stranger = Principal.of("beta", ["tool:other"])
    with pytest.raises(CapabilityDeniedError):
        await runtime.call(CallRequest(tool="unit_convert", arguments=CONVERT), stranger)
    agent = Principal.of("gamma", ["tool:*"])
    with pytest.raises(IdentityError):
        await runtime.call(CallRequest(tool="unit_convert", arguments=CONVERT, agent_id="alpha"), agent)
    await runtime.aclose()  # flushes what the last second counted
    assert refused(kernel) == [
        ("beta", "beta", "call unit_convert", "forbidden", 1),
        ("gamma", "alpha", "call unit_convert", "forbidden", 1),
    ]
    assert "tool:unit_convert" in next(kernel.audit_entries()).detail["error"]
