"""Callers take turns at a shared resource of a few slots: a flood waits behind its own pieces."""

from __future__ import annotations

import asyncio

from colony.callers import Turns


async def test_a_freed_slot_goes_to_the_next_caller_not_to_the_flood() -> None:
    turns = Turns(slots=2)
    served: list[str] = []

    async def piece(caller: str, name: str) -> None:
        await turns.take(caller)
        try:
            served.append(name)
            await asyncio.sleep(0.01)
        finally:
            turns.hand_on(caller)

    flood = [asyncio.create_task(piece("flooder", f"flood {n}")) for n in range(6)]
    await asyncio.sleep(0)  # the flood takes both slots and queues the rest
    others = [asyncio.create_task(piece(caller, caller)) for caller in ("alice", "bob")]
    await asyncio.gather(*flood, *others)
    assert served[:2] == ["flood 0", "flood 1"]  # both slots were free
    assert served[2:4] == ["alice", "bob"]  # each slot freed went to a caller waiting behind the flood
    assert served[4:] == ["flood 2", "flood 3", "flood 4", "flood 5"]
    assert turns.running == 0 and not turns.waiting


async def test_a_cancelled_wait_frees_nothing_it_did_not_hold() -> None:
    turns = Turns(slots=1)
    await turns.take("alice")
    waiting = asyncio.create_task(turns.take("bob"))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert not turns.waiting and turns.running == 1
    turns.hand_on("alice")
    assert turns.running == 0
    await asyncio.wait_for(turns.take("carol"), 1)  # the slot is free again
