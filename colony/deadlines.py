"""The current call's deadline, visible to everything the call runs.

The pipeline opens ``deadline_scope(call_timeout)`` around a tool call; code
deep inside the call (a sandbox exec, an HTTP request to a peer) asks
``remaining_seconds()`` and never waits longer than that, so no part of a call
outlives the call. The deadline lives in a ContextVar: it follows the call
across ``await`` and into tasks it starts, and never leaks into another
caller's context. Nested scopes keep the earlier deadline: an inner scope can
shorten the time left, never extend it. Deadlines are read on the monotonic
clock (or a clock the caller injects, so tests can drive time).

Work that honours the deadline (a sandbox command) is killed at it and answers
with what it did; whoever runs the call kills what is still running a grace
later (``kill_grace``), so an answer on its way is never thrown away.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["KILL_GRACE_SECONDS", "deadline_scope", "kill_grace", "remaining_seconds"]

#: The longest a call may take past its deadline to stop by itself and answer before it is killed.
KILL_GRACE_SECONDS = 3.0

Clock = Callable[[], float]


@dataclass(frozen=True)
class _Deadline:
    """An absolute point on ``clock``'s time line."""

    at: float
    clock: Clock

    def remaining(self) -> float:
        return self.at - self.clock()


_CURRENT: ContextVar[_Deadline | None] = ContextVar("colony_deadline", default=None)


@contextmanager
def deadline_scope(seconds: float, *, clock: Clock = time.monotonic) -> Iterator[float]:
    """Bound everything run inside the block to ``seconds`` from now (or an enclosing, earlier deadline).

    Args:
        seconds: Time the block may take; finite and not negative.
        clock: Monotonic clock in seconds; injected by tests, ``time.monotonic`` otherwise.

    Yields:
        The seconds actually left for the block: ``seconds``, or less when an
        enclosing scope ends sooner. Handy for ``anyio.fail_after``.

    Raises:
        ValueError: ``seconds`` is negative, NaN or infinite.
    """
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        raise ValueError(f"deadline_scope needs a number of seconds, got {type(seconds).__name__}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"deadline_scope needs finite, non-negative seconds, got {seconds!r}")
    mine = _Deadline(clock() + seconds, clock)
    outer = _CURRENT.get()
    chosen = outer if outer is not None and outer.remaining() < seconds else mine
    token = _CURRENT.set(chosen)
    try:
        yield max(chosen.remaining(), 0.0)
    finally:
        _CURRENT.reset(token)


def remaining_seconds() -> float | None:
    """Seconds left before the current deadline (0.0 once it has passed); None outside any scope."""
    current = _CURRENT.get()
    if current is None:
        return None
    return max(current.remaining(), 0.0)


def kill_grace(seconds: float) -> float:
    """How long past a deadline of ``seconds`` the work may take to answer: as long again, at most the grace."""
    return min(KILL_GRACE_SECONDS, seconds)
