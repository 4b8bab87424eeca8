"""ToolPool: the one owner of tool instances in a process, and the one place that shuts them down.

Every surface and flow in a process shares the pool, so a sandboxed tool runs in
one container per process, not one per surface. ``Runtime.aclose`` shuts every
instance down (a server's lifespan, ``colony mcp`` on SIGTERM, the CLI after its
call), so no container outlives its process. A tool removed from the catalog is
retired at once (no new call gets its instance) and shut down by the next
``close_retired`` (``Runtime.refresh``), which runs on the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from typing import TYPE_CHECKING

from colony.errors import ColonyError

if TYPE_CHECKING:
    from colony.capability import ToolCapability

__all__ = ["ToolPool"]


class ToolPool:
    """One instance per tool class, created on first use and shut down together."""

    def __init__(self) -> None:
        self._instances: dict[type[ToolCapability], ToolCapability] = {}
        self._retired: list[ToolCapability] = []
        self._lock = threading.Lock()

    def instance(self, cls: type[ToolCapability]) -> ToolCapability:
        """The pool's instance of ``cls``."""
        instance = self._instances.get(cls)
        if instance is None:
            with self._lock:
                instance = self._instances.get(cls)
                if instance is None:
                    instance = self._instances[cls] = cls()
        return instance

    def retire(self, keep: Collection[type[ToolCapability]]) -> None:
        """Take every instance whose class is not in ``keep`` out of service (safe from any thread)."""
        with self._lock:
            gone = [cls for cls in self._instances if cls not in keep]
            self._retired.extend(self._instances.pop(cls) for cls in gone)

    @property
    def retired(self) -> int:
        """How many retired instances wait to be shut down."""
        return len(self._retired)

    async def close_retired(self) -> None:
        """Shut down the instances ``retire`` took out of service."""
        with self._lock:
            retired, self._retired = self._retired, []
        await _shutdown_all(retired)

    async def shutdown(self) -> None:
        """Shut every instance down, even if one fails; then report the failures together."""
        with self._lock:
            instances, self._instances = [*self._instances.values(), *self._retired], {}
            self._retired = []
        await _shutdown_all(instances)


async def _shutdown_all(instances: list[ToolCapability]) -> None:
    errors = []
    for instance in instances:
        try:
            await instance.shutdown()
        except Exception as error:  # noqa: BLE001 - try every instance, then report
            errors.append(f"{instance.capability_name()}: {type(error).__name__}: {error}")
    if errors:
        raise ColonyError(f"{len(errors)} tool shutdown(s) failed: {'; '.join(errors)}")
