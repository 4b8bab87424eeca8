"""CPU work that may run long, off the event loop: one piece at a time per loop, callers in turn.

A bounded check may still spend a second (a costly JSON Schema over the largest arguments the
cap allows). On the event loop that second holds every other call; on a worker thread it
shares the interpreter with them, and one such thread per loop keeps the loop's share of it
however many costly calls are in flight. Work waiting for the thread is served a caller at a
time (``CURRENT_CALLER``, the principal the runtime authenticated), the caller served last
going to the back: a caller who sends many costly calls waits behind its own, never ahead of
another's. Work on inputs up to ``INLINE_BYTES`` (as JSON) takes tens of microseconds and stays
on the loop, where a thread hop would cost more than it saves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

from colony.callers import LoopTurns

__all__ = ["INLINE_BYTES", "off_the_loop"]

T = TypeVar("T")

#: Inputs up to this many bytes of JSON are worked on in place.
INLINE_BYTES = 16 * 1024

_thread = LoopTurns()


async def off_the_loop(work: Callable[[], T]) -> T:
    """``work()`` on a worker thread, once the current caller's turn comes."""
    async with _thread.turn():
        return await anyio.to_thread.run_sync(work)  # a cancelled caller still waits for its thread
