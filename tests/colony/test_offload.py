"""Costly work runs on a worker thread, one piece at a time per event loop, callers in turn, the loop free."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from colony.callers import CURRENT_CALLER
from colony.offload import off_the_loop


async def test_work_runs_off_the_loop_in_turn_while_the_loop_keeps_ticking() -> None:
    running, overlaps, threads = 0, 0, set()

    def work() -> int:
        nonlocal running, overlaps
        running += 1
        overlaps = max(overlaps, running)
        threads.add(threading.get_ident())
        time.sleep(0.1)  # CPU-bound work, as the loop sees it
        running -= 1
        return 7

    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beating = asyncio.create_task(heartbeat())
    try:
        assert await asyncio.gather(*(off_the_loop(work) for _ in range(3))) == [7, 7, 7]
    finally:
        beating.cancel()
    assert overlaps == 1  # one at a time: a flood of costly calls holds one thread, not the pool
    assert threading.get_ident() not in threads
    assert ticks >= 10  # the loop ran throughout the 0.3 s of work


async def test_an_error_in_the_work_reaches_the_caller() -> None:
    def refuse() -> None:
        raise ValueError("too costly")

    with pytest.raises(ValueError, match="too costly"):
        await off_the_loop(refuse)
    assert await off_the_loop(lambda: "next") == "next"  # the turn was handed back


async def test_callers_take_turns_so_a_flood_waits_behind_itself() -> None:
    served: list[str] = []

    def piece(name: str) -> Callable[[], None]:
        def work() -> None:
            time.sleep(0.02)
            served.append(name)

        return work

    async def as_caller(caller: str, name: str) -> None:
        CURRENT_CALLER.set(caller)  # this task's own context, as Runtime.call sets it
        await off_the_loop(piece(name))

    flood = [asyncio.create_task(as_caller("flooder", f"flood {n}")) for n in range(4)]
    await asyncio.sleep(0)  # the flood queues first
    others = [asyncio.create_task(as_caller(caller, caller)) for caller in ("alice", "bob")]
    await asyncio.gather(*flood, *others)
    # The flood's first piece had the thread; then each caller in turn, the flood behind itself.
    assert served == ["flood 0", "alice", "bob", "flood 1", "flood 2", "flood 3"]


async def test_a_cancelled_wait_gives_up_its_place_and_the_turn_goes_on() -> None:
    release = threading.Event()
    holding = asyncio.create_task(off_the_loop(lambda: release.wait(5)))
    await asyncio.sleep(0.05)  # it holds the thread
    waiting = asyncio.create_task(off_the_loop(lambda: "never"))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    assert await holding is True
    assert await asyncio.wait_for(off_the_loop(lambda: "next"), 5) == "next"
