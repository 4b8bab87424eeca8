"""One ColonyKernel per runtime, created on first use.

Every surface of a process shares the runtime's provider, so an MCP client, an
HTTP caller and a governed catalog call all reach the same kernel and store.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from colony.kernel import ColonyKernel, KernelSettings

__all__ = ["KernelProvider"]


class KernelProvider:
    """Lazily creates the kernel (from ``settings``, else the environment) the first time a call needs it."""

    def __init__(self, kernel: ColonyKernel | None = None, *, settings: KernelSettings | None = None) -> None:
        self._kernel = kernel
        self._settings = settings
        self._lock = threading.Lock()

    def get(self) -> ColonyKernel:
        """The shared kernel, created on the first call from the given settings or ``COLONY_*``."""
        if self._kernel is None:
            with self._lock:
                if self._kernel is None:
                    from colony.kernel import ColonyKernel

                    self._kernel = ColonyKernel(self._settings) if self._settings else ColonyKernel.from_env()
        return self._kernel

    @property
    def home(self) -> Path:
        """The Colony home of this process's kernel (its settings', else ``COLONY_HOME``)."""
        from colony.kernel import KernelSettings

        if self._kernel is not None:
            return self._kernel.settings.home
        return (self._settings or KernelSettings.from_env()).home

    def close(self) -> None:
        """Release the kernel's database connections, if it was ever created."""
        if self._kernel is not None:
            self._kernel.close()
