"""Refused calls reach the audit log, and a flood of them costs one write a second, not one each."""

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


async def test_a_flood_is_one_entry_a_second_with_its_count(kernel: ColonyKernel) -> None:
    clock = FakeClock()
    recorder = RefusalRecorder(KernelProvider(kernel), clock=clock)
    for _second in range(3):
        for _ in range(500):
            recorder.note("beta", None, "call unit_convert", 429, "over the rate")
            await recorder.flush_if_due()
        clock.advance(1.0)
    recorder.flush()  # what the last second counted (the servers' periodic flush, or close)
    counts = [count for *_, count in refused(kernel)]
    assert len(counts) <= 4 and sum(counts) == 1500  # 1500 refusals, at most one write a second (plus the tail)
    assert kernel.verify_audit().ok


async def test_callers_past_the_bound_are_counted_under_one_overflow_entry(kernel: ColonyKernel) -> None:
    recorder = RefusalRecorder(KernelProvider(kernel), clock=FakeClock(), max_keys=3)
    for address in range(50):  # an attacker cycling source addresses
        recorder.note("anonymous", None, "POST /v1/tool_call", 401, "no token", client=f"10.0.0.{address}")
    assert recorder.flush() == 4
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
    assert recorder.flush() == 1
    assert refused(kernel) == [("beta", "beta", "call unit_convert", "rate_limited", 2)]


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
