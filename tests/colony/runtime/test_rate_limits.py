"""Per-principal token buckets and concurrency caps, driven by a clock the test moves (no sleeping)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from colony.errors import RateLimitedError
from colony.runtime.rate_limits import (
    BUSY_RETRY_AFTER_SECONDS,
    PrincipalLimit,
    RateLimiter,
    RateLimitSettings,
    ToolLimit,
)

EXAMPLE = (
    '{"default": {"rate": 50, "burst": 100, "concurrency": 8},'
    ' "tools": {"shell_exec": {"rate": 2, "burst": 4, "concurrency": 1}}}'
)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def limiter(clock: FakeClock, text: str = EXAMPLE) -> RateLimiter:
    return RateLimiter(RateLimitSettings.model_validate_json(text), clock=clock)


async def admit(limiter: RateLimiter, principal: str, tool: str, times: int) -> None:
    for _ in range(times):
        async with limiter.acquire(principal, tool):
            pass


async def test_a_burst_then_refusal_naming_when_to_retry() -> None:
    clock = FakeClock()
    limits = limiter(clock)
    await admit(limits, "alice", "shell_exec", 4)
    with pytest.raises(RateLimitedError) as refused:
        async with limits.acquire("alice", "shell_exec"):
            pytest.fail("a fifth call within the burst of 4 was admitted")
    assert refused.value.retry_after_seconds == pytest.approx(0.5)  # one token at 2/s
    assert refused.value.retryable is True
    assert "shell_exec" in str(refused.value) and "2 calls/s" in str(refused.value)
    assert refused.value.to_dict()["retry_after_seconds"] == pytest.approx(0.5)


async def test_the_clock_refills_the_bucket() -> None:
    clock = FakeClock()
    limits = limiter(clock)
    await admit(limits, "alice", "shell_exec", 4)
    clock.advance(0.25)  # half a token
    with pytest.raises(RateLimitedError) as refused:
        await admit(limits, "alice", "shell_exec", 1)
    assert refused.value.retry_after_seconds == pytest.approx(0.25)
    clock.advance(0.25)
    await admit(limits, "alice", "shell_exec", 1)
    clock.advance(3600)  # a long quiet spell refills to the burst, never beyond it
    await admit(limits, "alice", "shell_exec", 4)
    with pytest.raises(RateLimitedError):
        await admit(limits, "alice", "shell_exec", 1)


async def test_a_refused_call_spends_nothing() -> None:
    clock = FakeClock()
    limits = limiter(clock)
    await admit(limits, "alice", "shell_exec", 4)
    for _ in range(10):
        with pytest.raises(RateLimitedError):
            await admit(limits, "alice", "shell_exec", 1)
    clock.advance(0.5)
    await admit(limits, "alice", "shell_exec", 1)


async def test_limits_are_per_tool_and_per_principal() -> None:
    clock = FakeClock()
    limits = limiter(clock)
    await admit(limits, "alice", "shell_exec", 4)
    await admit(limits, "alice", "unit_convert", 100)  # the default burst, untouched by shell_exec
    with pytest.raises(RateLimitedError) as refused:
        await admit(limits, "alice", "unit_convert", 1)
    assert refused.value.retry_after_seconds == pytest.approx(1 / 50)
    await admit(limits, "bob", "shell_exec", 4)  # another principal has its own buckets


async def test_the_principal_bucket_spans_every_tool() -> None:
    clock = FakeClock()
    limits = limiter(clock, '{"principal": {"rate": 1, "burst": 3}, "default": {"rate": 100, "burst": 100}}')
    for tool in ("a", "b", "c"):
        await admit(limits, "alice", tool, 1)
    with pytest.raises(RateLimitedError) as refused:
        await admit(limits, "alice", "d", 1)
    assert "all tools together" in str(refused.value) and refused.value.retry_after_seconds == pytest.approx(1.0)
    await admit(limits, "bob", "d", 1)


async def test_the_concurrency_cap_holds_while_calls_run() -> None:
    clock = FakeClock()
    limits = limiter(clock)
    async with limits.acquire("alice", "shell_exec"):
        assert limits.running("alice", "shell_exec") == 1
        with pytest.raises(RateLimitedError) as refused:
            await admit(limits, "alice", "shell_exec", 1)
        assert refused.value.retry_after_seconds == BUSY_RETRY_AFTER_SECONDS
        assert "running" in str(refused.value)
        await admit(limits, "bob", "shell_exec", 1)  # another principal's slot
    assert limits.running("alice", "shell_exec") == 0
    await admit(limits, "alice", "shell_exec", 1)


async def test_a_failing_call_frees_its_slot() -> None:
    limits = limiter(FakeClock())
    with pytest.raises(RuntimeError):
        async with limits.acquire("alice", "shell_exec"):
            raise RuntimeError("the tool broke")
    assert limits.running("alice", "shell_exec") == 0
    await admit(limits, "alice", "shell_exec", 1)


def test_settings_defaults_and_partial_tool_entries() -> None:
    defaults = RateLimitSettings()
    assert defaults.for_tool("anything") == defaults.default
    assert defaults.principal == PrincipalLimit(rate=500, burst=1000)
    partial = RateLimitSettings.model_validate({"tools": {"shell_exec": {"concurrency": 1}}})
    assert partial.for_tool("shell_exec") == ToolLimit(rate=100, burst=200, concurrency=1)
    custom = RateLimitSettings.model_validate_json(EXAMPLE)
    assert custom.for_tool("shell_exec") == ToolLimit(rate=2, burst=4, concurrency=1)
    assert custom.for_tool("unit_convert") == ToolLimit(rate=50, burst=100, concurrency=8)


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"default": {"rate": 0, "burst": 1, "concurrency": 1}}, "default.rate"),
        ({"tools": {"shell_exec": {"burst": 0}}}, "tools.shell_exec.burst"),
        ({"tools": {"shell_exec": {"concurrency": -1}}}, "tools.shell_exec.concurrency"),
        ({"tools": {"shell_exec": {"rate": 1, "ceiling": 3}}}, "tools.shell_exec.ceiling"),
        ({"principal": {"rate": 1, "burst": 1, "concurrency": 1}}, "principal.concurrency"),
    ],
)
def test_bad_settings_name_the_field(document: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        RateLimitSettings.model_validate(document)
    assert field in {".".join(str(part) for part in error["loc"]) for error in invalid.value.errors()}


async def test_idle_buckets_of_unseen_names_are_forgotten() -> None:
    clock = FakeClock()
    limits = limiter(clock)
    for index in range(25_000):
        await admit(limits, "alice", f"tool-{index}", 1)
        clock.advance(0.02)  # a token back at 50/s: each bucket is full again by the next call
    assert len(limits._tools) <= 20_000
