"""Refused calls into the audit log, coalesced so a flood of refusals cannot become a flood of writes.

A refusal (401 unauthenticated, 403 forbidden, 429 over a limit) changes no state, and
a caller that is refused can repeat itself as fast as the network carries it: a 429 is
by definition a caller going faster than it may. Writing one audit entry per refusal
would let any caller turn its refusals into database writes on the kernel's store, and
into waits on the audit head every decision also locks. So refusals are counted in
memory, per (who, on whose behalf, what, status, client address), and written at most
once a second: one transaction holding one entry per key, with how many refusals it
stands for and when the first and last were. The first refusal after a quiet second is
written at once (a single refused CLI call is in the log before the command exits);
what a burst adds is written by the next flush (the servers flush every second, every
runtime on close). Names a caller sent (the agent it claims to act for, a tool name)
are cut to 256 characters and made NUL-free, so no refusal makes a record the log
refuses. Distinct keys are bounded too: past ``max_keys`` (an attacker cycling source
addresses or tool names) the rest are counted under one overflow key per status (who
``*``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from colony.errors import CapabilityDeniedError, IdentityError, KernelInputError

if TYPE_CHECKING:
    from colony.runtime.kernels import KernelProvider

__all__ = ["ANONYMOUS", "RefusalRecorder"]

ANONYMOUS = "anonymous"  # who a 401 names: nobody was authenticated
_MAX_ERROR = 512
logger = logging.getLogger(__name__)

_Key = tuple[str, str, str, int, str | None]


@dataclass
class _Count:
    """Refusals of one key since its last entry."""

    count: int
    first_at: float
    last_at: float
    error: str
    client: str | None
    clients: set[str] | None = None  # the overflow key's distinct callers, up to a bound


class RefusalRecorder:
    """Count refusals in memory and append them to the kernel's audit log, at most once a second."""

    def __init__(
        self,
        kernels: KernelProvider,
        *,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.time,
        interval_seconds: float = 1.0,
    ) -> None:
        self.kernels = kernels
        self.max_keys = max_keys
        self.clock = clock
        self.interval_seconds = interval_seconds
        self._counts: dict[_Key, _Count] = {}
        self._lock = threading.Lock()
        self._last_flush = float("-inf")
        self._flushing = False

    def note(
        self, who: str, on_behalf: str | None, what: str, status: int, error: str, *, client: str | None = None
    ) -> None:
        """Count one refusal (no I/O: safe on any hot path)."""
        now = self.clock()
        who = _clean(who)
        key: _Key = (who, _clean(on_behalf) if on_behalf else who, _clean(what), status, client and _clean(client))
        with self._lock:
            found = self._counts.get(key)
            if found is None and len(self._counts) >= self.max_keys:
                key = ("*", "*", "*", status, None)
                found = self._counts.get(key)
                if found is None:
                    found = self._counts[key] = _Count(0, now, now, "many callers refused", None, set())
                if found.clients is not None and len(found.clients) < 1000:
                    found.clients.add(f"{who}@{client}" if client else who)
            if found is None:
                self._counts[key] = _Count(1, now, now, error[:_MAX_ERROR], key[4])
                return
            found.count += 1
            found.last_at = now

    def forbidden(self, who: str, on_behalf: str | None, what: str) -> CountForbidden:
        """An async context manager: count a permission or identity refusal (403) raised inside, then let it go on."""
        return CountForbidden(self, who, on_behalf, what)

    def due(self) -> bool:
        """Whether refusals are waiting and the last flush is at least ``interval_seconds`` old."""
        return bool(self._counts) and not self._flushing and self.clock() - self._last_flush >= self.interval_seconds

    async def flush_if_due(self) -> None:
        """Write what is waiting unless a flush ran within the interval (the burst waits for the next)."""
        if self.due():
            await anyio.to_thread.run_sync(self.flush)

    def flush(self) -> int:
        """Append everything counted, one entry per key in one transaction; how many entries were written.

        A write that fails (the database is unreachable) keeps the counts for the next flush.
        """
        with self._lock:
            if self._flushing or not self._counts:
                return 0
            self._flushing, counts, self._counts = True, self._counts, {}
            self._last_flush = self.clock()
        try:
            return self.kernels.get().record_refusals([_record(key, count) for key, count in counts.items()])
        except KernelInputError as error:  # cannot happen for cleaned keys; never let one record block the rest
            logger.error("dropped %d refused call(s) the audit log would not take: %s", len(counts), error)
            return 0
        except Exception as error:  # noqa: BLE001 - a refusal is answered even when it cannot be recorded
            logger.warning("could not record %d refused call(s) in the audit log: %s", len(counts), error)
            with self._lock:
                for key, count in counts.items():
                    self._merge(key, count)
            return 0
        finally:
            self._flushing = False

    def _merge(self, key: _Key, count: _Count) -> None:
        found = self._counts.get(key)
        if found is None:
            self._counts[key] = count
            return
        found.count += count.count
        found.first_at = min(found.first_at, count.first_at)

    async def run(self) -> None:
        """Flush the tail of a burst until cancelled (servers run this beside their other tasks).

        It keeps to the same once-an-interval pace as the request path's flushes, so the two
        together still write at most once an interval.
        """
        while True:
            await anyio.sleep(self.interval_seconds)
            await self.flush_if_due()


def _clean(value: str) -> str:
    """A caller-supplied name as the log can store it: no NUL, at most 256 characters, never empty."""
    return value.replace("\x00", "\\0")[:256].strip() or "?"


def _record(key: _Key, count: _Count) -> Any:
    from colony.kernel.auditing import refusal_record

    who, on_behalf, what, status, _ = key
    detail: dict[str, Any] = {"count": count.count, "first_at": count.first_at, "last_at": count.last_at}
    if count.client:
        detail["client"] = count.client
    if count.clients is not None:
        detail["callers"] = sorted(count.clients)
    return refusal_record(who, on_behalf, what, status, count.error, **detail)


class CountForbidden:
    """See :meth:`RefusalRecorder.forbidden` (a class, not a generator: it wraps every call on the hot path)."""

    __slots__ = ("_on_behalf", "_recorder", "_what", "_who")

    def __init__(self, recorder: RefusalRecorder, who: str, on_behalf: str | None, what: str) -> None:
        self._recorder = recorder
        self._who = who
        self._on_behalf = on_behalf
        self._what = what

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if isinstance(error, CapabilityDeniedError | IdentityError):
            self._recorder.note(self._who, self._on_behalf, self._what, 403, str(error))
            await self._recorder.flush_if_due()
