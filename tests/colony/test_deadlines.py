"""The call deadline: scoped, nested to the earlier one, carried across awaits and tasks, never leaked."""

from __future__ import annotations

import asyncio
import math

import pytest

from colony.deadlines import deadline_scope, remaining_seconds


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_no_deadline_outside_any_scope() -> None:
    assert remaining_seconds() is None


def test_remaining_counts_down_to_zero_and_stays_there() -> None:
    clock = FakeClock()
    with deadline_scope(5, clock=clock) as left:
        assert left == 5
        assert remaining_seconds() == 5
        clock.now += 2
        assert remaining_seconds() == 3
        clock.now += 10
        assert remaining_seconds() == 0.0
    assert remaining_seconds() is None


def test_an_inner_scope_can_shorten_but_never_extend() -> None:
    clock = FakeClock()
    with deadline_scope(10, clock=clock):
        clock.now += 4
        with deadline_scope(30, clock=clock) as longer:
            assert longer == 6  # the outer deadline is earlier: it wins
            assert remaining_seconds() == 6
        with deadline_scope(2, clock=clock) as shorter:
            assert shorter == 2
            clock.now += 1
            assert remaining_seconds() == 1
        assert remaining_seconds() == 5  # leaving the inner scope restores the outer deadline


def test_the_scope_is_restored_after_an_error() -> None:
    clock = FakeClock()
    with pytest.raises(RuntimeError), deadline_scope(1, clock=clock):
        raise RuntimeError("boom")
    assert remaining_seconds() is None


@pytest.mark.parametrize("seconds", [-1, math.nan, math.inf, "3", True])
def test_bad_seconds_are_refused_by_name(seconds: object) -> None:
    with pytest.raises(ValueError, match="deadline_scope needs"), deadline_scope(seconds):  # type: ignore[arg-type]
        pass


def test_the_deadline_follows_the_call_into_tasks_and_not_into_other_callers() -> None:
    seen: dict[str, float | None] = {}

    async def inner(name: str) -> None:
        await asyncio.sleep(0)
        seen[name] = remaining_seconds()

    async def caller_with_deadline() -> None:
        with deadline_scope(60):
            await asyncio.gather(inner("child task"), inner("same task"))

    async def main() -> None:
        await asyncio.gather(caller_with_deadline(), inner("other caller"))

    asyncio.run(main())
    assert seen["other caller"] is None
    for name in ("child task", "same task"):
        value = seen[name]
        assert value is not None and 0 < value <= 60
