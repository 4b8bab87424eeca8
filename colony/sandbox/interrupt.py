"""Interrupt: how a cancelled caller stops the sandbox work a worker thread is blocked in.

The event loop sets it (the awaiting coroutine was cancelled); the worker thread
sees it at once, because ``select()`` on a socket can also wait on the
interrupt's pipe, and then kills the command the way a timeout does.
"""

from __future__ import annotations

import os
import threading

__all__ = ["Interrupt"]


class Interrupt:
    """A one-shot flag, settable from any thread, that ``select()`` can wait on."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        self._lock = threading.Lock()
        self._set = False
        self._closed = False

    def set(self) -> None:
        """Raise the flag and wake any ``select()`` waiting on it; harmless twice or after close()."""
        with self._lock:
            if self._set:
                return
            self._set = True
            if not self._closed:
                os.write(self._write, b"!")

    def is_set(self) -> bool:
        """Whether the flag was raised."""
        return self._set

    def fileno(self) -> int:
        """The file descriptor that turns readable once the flag is raised."""
        return self._read

    def close(self) -> None:
        """Release the pipe; the flag keeps its value."""
        with self._lock:
            if not self._closed:
                self._closed = True
                os.close(self._read)
                os.close(self._write)
