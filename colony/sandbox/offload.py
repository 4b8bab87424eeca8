"""Blocking Docker work run off the event loop, and stopped when its caller is cancelled.

``asyncio.to_thread`` would make interpreter exit (a Ctrl-C included) wait for a
running command, and a cancelled caller would leave the command running in its
thread. Here the work runs in a daemon thread, so the exit handler can remove
the container instead; and when the awaiting coroutine is cancelled (an
``anyio.fail_after`` or ``asyncio.timeout`` in the caller, a client that went
away), the work's ``Interrupt`` is raised and the coroutine waits, shielded,
until the thread has killed the command and released its container, and only
then lets the cancellation continue. Whoever catches the cancellation can
record the call as timed out knowing nothing of it still runs. The work runs in
a copy of the caller's context, as ``asyncio.to_thread``'s would (the call's
trace span among it).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

import anyio

from colony.sandbox.interrupt import Interrupt

__all__ = ["in_daemon_thread", "interruptible_in_daemon_thread"]

T = TypeVar("T")


async def in_daemon_thread(work: Callable[[], T]) -> T:
    """Run ``work`` in a daemon thread and return its result (or raise its error)."""
    return await interruptible_in_daemon_thread(lambda _interrupt: work())


async def interruptible_in_daemon_thread(work: Callable[[Interrupt], T]) -> T:
    """Run ``work(interrupt)`` in a daemon thread; on cancellation, raise the interrupt and wait for it to end."""
    loop = asyncio.get_running_loop()
    finished = asyncio.Event()
    outcome: list[tuple[bool, Any]] = []
    interrupt = Interrupt()

    def run() -> None:
        try:
            outcome.append((True, work(interrupt)))
        except BaseException as error:  # noqa: BLE001 - handed to the awaiting coroutine, not lost in the thread
            outcome.append((False, error))
        finally:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits the result any more
                loop.call_soon_threadsafe(finished.set)

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(run,), name="colony-sandbox", daemon=True).start()
    try:
        await finished.wait()
    except BaseException:
        interrupt.set()
        await _wait_shielded(finished)
        raise
    finally:
        if finished.is_set():
            interrupt.close()
    succeeded, value = outcome[0]
    if succeeded:
        return cast(T, value)
    raise value


async def _wait_shielded(finished: asyncio.Event) -> None:
    """Wait for ``finished`` through any further cancellation (anyio's repeats it until the scope exits)."""
    with anyio.CancelScope(shield=True):
        while not finished.is_set():
            try:
                await finished.wait()
            except asyncio.CancelledError:
                continue  # a plain asyncio cancel() again: the kill is still under way, keep waiting
