"""Who the call being run is for, as a context variable: set by ``Runtime.call``, read by shared resources.

A resource several callers share (the sandbox's container pool, the thread that checks
costly arguments, the worker processes of CPU-bound tools) gives each caller a share of
it; the caller is never an argument a tool could forge, so the runtime, which
authenticated it, names it here for the length of the call. Outside a call it is None.
``Turns`` is that share for a resource of a few slots: callers waiting are served in turn;
``LoopTurns`` gives each event loop its own and takes the current caller's turn.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar

__all__ = ["CURRENT_CALLER", "LoopTurns", "Turns"]

CURRENT_CALLER: ContextVar[str | None] = ContextVar("colony_current_caller", default=None)


class Turns:
    """Who holds one of ``slots`` next: the callers waiting, served one piece each in turn.

    First come, first served, one caller's flood would hold every slot until it is done;
    here a caller who just finished goes to the back of the callers waiting, so a flood
    waits behind its own pieces, never ahead of another caller's. Bound to one event loop.
    """

    def __init__(self, slots: int = 1) -> None:
        self.slots = slots
        self.running = 0
        self.waiting: OrderedDict[str | None, deque[asyncio.Future[None]]] = OrderedDict()

    async def take(self, caller: str | None) -> None:
        """Return once ``caller`` holds a slot (``hand_on`` gives it up)."""
        if self.running < self.slots:
            self.running += 1
            return
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(caller, deque()).append(handed)
        try:
            await handed
        except asyncio.CancelledError:
            if handed.done() and not handed.cancelled():  # handed a slot as it was cancelled: pass it on
                self.hand_on(caller)
            else:
                self._forget(caller, handed)
            raise

    def hand_on(self, caller: str | None) -> None:
        """``caller`` is done: its slot goes to the next caller waiting, ``caller`` to the back."""
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
        self.running -= 1

    def _forget(self, caller: str | None, handed: asyncio.Future[None]) -> None:
        queue = self.waiting.get(caller)
        if queue is not None and handed in queue:
            queue.remove(handed)
            if not queue:
                del self.waiting[caller]


class LoopTurns:
    """``Turns`` of ``slots`` for each event loop (a Turns is bound to one), taken as the current caller."""

    def __init__(self, slots: int = 1) -> None:
        self.slots = slots
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Turns] = weakref.WeakKeyDictionary()

    def here(self) -> Turns:
        """The running loop's turns."""
        loop = asyncio.get_running_loop()
        turns = self._by_loop.get(loop)
        if turns is None:
            turns = self._by_loop[loop] = Turns(self.slots)
        return turns

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold a slot for the block, once ``CURRENT_CALLER``'s turn comes."""
        turns, caller = self.here(), CURRENT_CALLER.get()
        await turns.take(caller)
        try:
            yield
        finally:
            turns.hand_on(caller)
