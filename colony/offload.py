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

import asyncio
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

from colony.callers import CURRENT_CALLER

__all__ = ["INLINE_BYTES", "off_the_loop"]

T = TypeVar("T")

#: Inputs up to this many bytes of JSON are worked on in place.
INLINE_BYTES = 16 * 1024


class _Turns:
    """Who works on the thread next: the callers waiting, served one piece each in turn."""

    def __init__(self) -> None:
        self.busy = False
        self.waiting: OrderedDict[str | None, deque[asyncio.Future[None]]] = OrderedDict()

    async def take(self, caller: str | None) -> None:
        """Return once ``caller`` holds the turn (``hand_on`` gives it up)."""
        if not self.busy:
            self.busy = True
            return
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(caller, deque()).append(handed)
        try:
            await handed
        except asyncio.CancelledError:
            if handed.done() and not handed.cancelled():  # handed the turn as it was cancelled: pass it on
                self.hand_on(caller)
            else:
                self._forget(caller, handed)
            raise

    def hand_on(self, caller: str | None) -> None:
        """``caller`` is done: the turn goes to the next caller waiting, ``caller`` to the back."""
        if caller in self.waiting and len(self.waiting) > 1:
            self.waiting.move_to_end(caller)
        while self.waiting:
            next_caller, queue = next(iter(self.waiting.items()))
            handed = queue.popleft()
            if queue:
                self.waiting.move_to_end(next_caller)
            else:
                del self.waiting[next_caller]
            if not handed.done():
                handed.set_result(None)
                return
        self.busy = False

    def _forget(self, caller: str | None, handed: asyncio.Future[None]) -> None:
        queue = self.waiting.get(caller)
        if queue is not None and handed in queue:
            queue.remove(handed)
            if not queue:
                del self.waiting[caller]


_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turns] = weakref.WeakKeyDictionary()


async def off_the_loop(work: Callable[[], T]) -> T:
    """``work()`` on a worker thread, once the current caller's turn comes."""
    loop = asyncio.get_running_loop()
    turns = _turns.get(loop)
    if turns is None:
        turns = _turns[loop] = _Turns()
    caller = CURRENT_CALLER.get()
    await turns.take(caller)
    try:
        return await anyio.to_thread.run_sync(work)  # a cancelled caller still waits for its thread
    finally:
        turns.hand_on(caller)
