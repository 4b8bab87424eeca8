"""Costly work runs on a worker thread, one piece at a time per event loop, while the loop serves others."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

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
