"""One worker-thread hop for the steps of a governed call that can run in a thread, one after another.

Run as hops of their own between the event loop and worker threads (propose, grow the
reservation, run, record), a governed call spends more on the hops than on the kernel's
work when the machine is busy. Here one thread does every step it can in a row, and when
the action is one of them the loop keeps the executor's deadline: the action has its
seconds from the moment it starts. The thread and the loop agree on the call's phase
under one lock:

    BEFORE -> RUNNING -> RECORDING -> DONE   the action ran in the hop: the loop waits for one hop
    BEFORE -> DONE                           the action runs elsewhere, or the verdict was not EXECUTE
    RUNNING, past its deadline -> ABANDONED  the loop answers timed out and records that;
                                             the thread, when the action returns, records nothing
    BEFORE, the caller cancelled -> ABANDONED the action never starts

The gate and the record have no deadline, as when they were hops of their own, and an
action that finished in time is never reported as timed out while its record is written.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from collections.abc import Callable

import anyio.to_thread

from colony.deadlines import remaining_seconds

__all__ = ["Handoff", "Phase", "run_in_one_hop"]


class Phase(enum.Enum):
    """Where a call in its hop is."""

    BEFORE = "before"
    RUNNING = "running"
    RECORDING = "recording"
    DONE = "done"
    ABANDONED = "abandoned"


class Handoff:
    """The phase a hop's thread and the event loop share; it changes under its lock."""

    def __init__(self) -> None:
        self.phase = Phase.BEFORE
        self.expires_at = math.inf  # on time.monotonic, once RUNNING
        self.failure: BaseException | None = None  # what the thread raised (the loop raises it again)
        self._changed = threading.Condition()

    def move(self, phase: Phase, *, expires_at: float = math.inf) -> bool:
        """Move on to ``phase`` (from the thread); False when the loop abandoned the call."""
        with self._changed:
            if self.phase is Phase.ABANDONED:
                return False
            self.phase, self.expires_at = phase, expires_at
            self._changed.notify_all()
            return True

    def abandon(self, *among: Phase) -> bool:
        """Abandon the call if it is in one of ``among`` (from the loop); whether it was."""
        with self._changed:
            if self.phase not in among:
                return False
            self.phase = Phase.ABANDONED
            self._changed.notify_all()
            return True

    def state(self) -> tuple[Phase, float]:
        """The phase and, while RUNNING, when the action's deadline passes."""
        with self._changed:
            return self.phase, self.expires_at

    def wait_past(self, phase: Phase, timeout: float | None) -> None:
        """Block until the phase is no longer ``phase``, or ``timeout`` seconds passed."""
        with self._changed:
            self._changed.wait_for(lambda: self.phase is not phase, timeout)


async def run_in_one_hop(work: Callable[[Handoff], None], timeout_seconds: float) -> Handoff:
    """Run ``work(handoff)`` in a worker thread and return once it is done, or its action overran.

    ``work`` calls ``handoff.move(RUNNING, expires_at=...)`` right before the action and
    ``move(RECORDING)`` right after it, and runs neither when a move returns False. An
    action still running at its deadline leaves the handoff ABANDONED. What ``work``
    raised is raised here.
    """
    handoff = Handoff()

    def guarded() -> None:
        try:
            work(handoff)
        except BaseException as error:  # noqa: BLE001 - handed to the loop, which raises it
            handoff.failure = error
        handoff.move(Phase.DONE)

    outer = remaining_seconds()
    first = timeout_seconds if outer is None else min(timeout_seconds, outer)
    try:
        with anyio.move_on_after(first):  # the action cannot have started before now: its deadline is later
            await anyio.to_thread.run_sync(guarded, abandon_on_cancel=True)
        while True:
            phase, expires_at = handoff.state()
            if phase in (Phase.DONE, Phase.ABANDONED):
                break
            wait = None  # the gate and the record have no deadline
            if phase is Phase.RUNNING:
                wait = expires_at - time.monotonic()
                if wait <= 0 and handoff.abandon(Phase.RUNNING):
                    break
            await anyio.to_thread.run_sync(handoff.wait_past, phase, wait, abandon_on_cancel=True)
    except BaseException:
        handoff.abandon(Phase.BEFORE)  # a cancelled caller's action must not start after it left
        raise
    if handoff.failure is not None:
        raise handoff.failure
    return handoff
