"""CPU work that may run long, off the event loop: one piece at a time per loop.

A bounded check may still spend a second (a costly JSON Schema over the largest arguments the
cap allows). On the event loop that second holds every other call; on a worker thread it
shares the interpreter with them, and one such thread per loop keeps the loop's share of it
however many costly calls are in flight. Work on inputs up to ``INLINE_BYTES`` (as JSON) takes
tens of microseconds and stays on the loop, where a thread hop would cost more than it saves.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

__all__ = ["INLINE_BYTES", "off_the_loop"]

T = TypeVar("T")

#: Inputs up to this many bytes of JSON are worked on in place.
INLINE_BYTES = 16 * 1024

_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


async def off_the_loop(work: Callable[[], T]) -> T:
    """``work()`` on a worker thread, after the costly work this loop sent there before it."""
    loop = asyncio.get_running_loop()
    turn = _turns.get(loop)
    if turn is None:
        turn = _turns[loop] = anyio.CapacityLimiter(1)
    return await anyio.to_thread.run_sync(work, limiter=turn)
