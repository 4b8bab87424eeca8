"""Refused calls into the audit log, aggregated so a flood of refusals cannot become a flood of writes.

A refusal (401 unauthenticated, 403 forbidden, 429 over a limit) changes no state, and
a caller that is refused can repeat itself as fast as the network carries it, changing
what it claims each time (the agent it acts for, a path, a tool name). Writing one audit
entry per refusal, or per distinct claim, would let any caller turn its refusals into
database writes on the kernel's store, and into waits on the audit head every decision
also locks. So refusals are grouped by kind: who was refused (the principal, or
``anonymous`` and the client's address for a 401), the status and the verb of what was
refused (``call``, ``read``, ``POST``...), never by the names the caller chose.

The first refusal of a kind opens a window of ``window_seconds`` and is written as it is
(at the next flush, within ``interval_seconds``: a single refused CLI call is in the log
before the command exits). The rest of the window is counted in memory and written as
one entry when the window closes or the next refusal of its kind comes after it: how many
it stands for, when the first and last were, and the distinct names they carried (up to
``_MAX_NAMES`` of each). Writes happen at most once an interval, one transaction each (the
servers flush every interval, every runtime on close). Names a caller sent are cut to 256
characters and made NUL-free, so no refusal makes a record the log refuses. Open windows
are bounded too: past ``max_keys`` (an attacker cycling source addresses) the rest are
counted under one overflow window per status (who ``*``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from colony.errors import CapabilityDeniedError, IdentityError, KernelInputError

if TYPE_CHECKING:
    from colony.kernel.auditing import AuditRecord
    from colony.runtime.kernels import KernelProvider

__all__ = ["ANONYMOUS", "RefusalRecorder"]

ANONYMOUS = "anonymous"  # who a 401 names: nobody was authenticated
_MAX_ERROR = 512
_MAX_NAMES = 20  # distinct on-behalf and what names an aggregated entry lists
_MAX_CALLERS = 1000  # distinct callers the overflow window lists
logger = logging.getLogger(__name__)

_Kind = tuple[str, str | None, int, str]  # who, client address, status, verb
_Entry = tuple[str, str, str, int, str, dict[str, Any]]  # who, on behalf, what, status, error, detail


@dataclass
class _Window:
    """The refusals of one kind after its first, until the window closes."""

    opened_at: float
    client: str | None
    count: int = 0
    first_at: float = 0.0
    last_at: float = 0.0
    error: str = ""
    on_behalf: set[str] = field(default_factory=set)
    what: set[str] = field(default_factory=set)
    truncated: set[str] = field(default_factory=set)  # which of the name lists reached _MAX_NAMES
    callers: set[str] | None = None  # the overflow window's distinct callers, up to a bound

    def add(self, now: float, on_behalf: str, what: str, error: str) -> None:
        if not self.count:
            self.first_at = now
        self.count += 1
        self.last_at = now
        self.error = error
        for label, seen, name in (("on_behalf", self.on_behalf, on_behalf), ("what", self.what, what)):
            if name not in seen:
                if len(seen) < _MAX_NAMES:
                    seen.add(name)
                else:
                    self.truncated.add(label)

    def entry(self, kind: _Kind) -> _Entry:
        """The one entry standing for this window's refusals."""
        who, _, status, verb = kind
        on_behalf = next(iter(self.on_behalf)) if len(self.on_behalf) == 1 else "*"
        what = next(iter(self.what)) if len(self.what) == 1 else f"{verb} *"
        detail: dict[str, Any] = {
            "count": self.count,
            "first_at": self.first_at,
            "last_at": self.last_at,
            "window": {"opened_at": self.opened_at},
        }
        if self.client:
            detail["client"] = self.client
        if self.callers is not None:
            detail["callers"] = sorted(self.callers)
        else:
            detail["names"] = {"on_behalf": sorted(self.on_behalf), "what": sorted(self.what)}
            if self.truncated:
                detail["names"]["truncated"] = sorted(self.truncated)
        return who, on_behalf, what, status, self.error, detail


class RefusalRecorder:
    """Aggregate refusals per kind and window, and append them to the kernel's audit log at most once an interval."""

    def __init__(
        self,
        kernels: KernelProvider,
        *,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.time,
        interval_seconds: float = 1.0,
        window_seconds: float = 60.0,
    ) -> None:
        self.kernels = kernels
        self.max_keys = max_keys
        self.clock = clock
        self.interval_seconds = interval_seconds
        self.window_seconds = window_seconds
        self._windows: dict[_Kind, _Window] = {}  # in the order they opened
        self._pending: list[_Entry] = []
        self._lock = threading.Lock()
        self._last_flush = float("-inf")
        self._flushing = False

    def note(
        self, who: str, on_behalf: str | None, what: str, status: int, error: str, *, client: str | None = None
    ) -> None:
        """Count one refusal (no I/O: safe on any hot path)."""
        now = self.clock()
        who = _clean(who)
        behalf = _clean(on_behalf) if on_behalf else who
        what = _clean(what)
        client = client and _clean(client)
        error = error[:_MAX_ERROR]
        kind: _Kind = (who, client, status, what.split(" ", 1)[0])
        with self._lock:
            window = self._windows.get(kind)
            if window is not None and now - window.opened_at >= self.window_seconds:
                self._close(kind, window)
                window = None
            if window is not None:
                window.add(now, behalf, what, error)
                return
            if len(self._windows) < self.max_keys:
                self._windows[kind] = _Window(opened_at=now, client=client)
                detail: dict[str, Any] = {"count": 1, "first_at": now, "last_at": now}
                if client:
                    detail["client"] = client
                self._pending.append((who, behalf, what, status, error, detail))
                return
            overflow: _Kind = ("*", None, status, "*")
            window = self._windows.get(overflow)
            if window is None:
                window = self._windows[overflow] = _Window(opened_at=now, client=None, callers=set())
            window.add(now, "*", "*", "many callers refused")
            if window.callers is not None and len(window.callers) < _MAX_CALLERS:
                window.callers.add(f"{who}@{client}" if client else who)

    def forbidden(self, who: str, on_behalf: str | None, what: str) -> CountForbidden:
        """An async context manager: count a permission or identity refusal (403) raised inside, then let it go on."""
        return CountForbidden(self, who, on_behalf, what)

    def due(self) -> bool:
        """Whether entries are waiting (or a window is over) and the last flush is at least an interval old."""
        if self._flushing or self.clock() - self._last_flush < self.interval_seconds:
            return False
        if self._pending:
            return True
        oldest = next(iter(self._windows.values()), None)
        return oldest is not None and self.clock() - oldest.opened_at >= self.window_seconds

    async def flush_if_due(self) -> None:
        """Write what is waiting unless a flush ran within the interval (the burst waits for the next)."""
        if self.due():
            await anyio.to_thread.run_sync(self.flush)

    def flush(self, *, final: bool = False) -> int:
        """Append the waiting entries and those of the windows that closed, in one transaction; how many.

        ``final`` closes every window (the runtime is closing). A write that fails (the
        database is unreachable) keeps the entries for the next flush.
        """
        with self._lock:
            if self._flushing:
                return 0
            now = self.clock()
            for kind, window in list(self._windows.items()):
                if not final and now - window.opened_at < self.window_seconds:
                    break  # opened in order: the rest are younger
                self._close(kind, window)
            if not self._pending:
                return 0
            self._flushing, entries, self._pending = True, self._pending, []
            self._last_flush = now
        try:
            return self.kernels.get().record_refusals([_record(*entry) for entry in entries])
        except KernelInputError as error:  # cannot happen for cleaned names; never let one record block the rest
            logger.error("dropped %d refused call entries the audit log would not take: %s", len(entries), error)
            return 0
        except Exception as error:  # noqa: BLE001 - a refusal is answered even when it cannot be recorded
            logger.warning("could not record %d refused call entries in the audit log: %s", len(entries), error)
            with self._lock:
                self._pending[:0] = entries
            return 0
        finally:
            self._flushing = False

    def _close(self, kind: _Kind, window: _Window) -> None:
        """End ``kind``'s window: its entry waits for the next flush (none when only the first came)."""
        del self._windows[kind]
        if window.count:
            self._pending.append(window.entry(kind))

    async def run(self) -> None:
        """Flush entries and closed windows until cancelled (servers run this beside their other tasks).

        It keeps to the same once-an-interval pace as the request path's flushes, so the two
        together still write at most once an interval.
        """
        while True:
            await anyio.sleep(self.interval_seconds)
            await self.flush_if_due()


def _clean(value: str) -> str:
    """A caller-supplied name as the log can store it: no NUL, at most 256 characters, never empty."""
    return value.replace("\x00", "\\0")[:256].strip() or "?"


def _record(who: str, on_behalf: str, what: str, status: int, error: str, detail: dict[str, Any]) -> AuditRecord:
    from colony.kernel.auditing import refusal_record

    return refusal_record(who, on_behalf, what, status, error, **detail)


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
