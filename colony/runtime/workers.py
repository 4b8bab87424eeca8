"""Worker processes for CPU-bound tools: hostile input costs a worker, never this process's event loop.

A pure Python action that a caller can make compute for seconds (a schema validator, a
redactor over the largest text the caps allow) holds the GIL while it runs; in a thread
it slows every other request of the process and keeps running after its call has timed
out. A tool that declares ``cpu_bound = True`` therefore runs in a worker process
(anyio's process pool): the event loop stays free, and a call cancelled at its deadline
kills its worker.

    workers = WorkerProcesses()
    result = await workers.run(PiiRedact, "redact_pii", {"text": "..."})
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import anyio.to_process

from colony.capability import ToolCapability
from colony.errors import ColonyError, ToolExecutionError

__all__ = ["WorkerProcesses"]

_instances: dict[type[ToolCapability], ToolCapability] = {}


class WorkerProcesses:
    """At most ``limit`` calls run in worker processes at once; the rest wait under their own deadline."""

    def __init__(self, limit: int | None = None) -> None:
        self.limiter = anyio.CapacityLimiter(limit or max(2, os.cpu_count() or 1))

    async def run(self, cls: type[ToolCapability], action: str, arguments: dict[str, Any]) -> Any:
        """``action`` of ``cls`` in a worker; cancelling the call (its deadline) kills the worker."""
        return await anyio.to_process.run_sync(_call, cls, action, arguments, cancellable=True, limiter=self.limiter)


def _call(cls: type[ToolCapability], action: str, arguments: dict[str, Any]) -> Any:
    """In the worker: one instance per tool class for the worker's life, as ToolPool keeps in the server."""
    instance = _instances.get(cls)
    if instance is None:
        instance = _instances[cls] = cls()
    try:
        return instance.bound_action(action)(**arguments)
    except ColonyError:
        raise
    except Exception as error:  # noqa: BLE001 - it must cross the process boundary: say what it was, as the thread path does
        transient = isinstance(error, ConnectionError | TimeoutError)
        raise ToolExecutionError(
            f"{cls.spec.name} failed: {type(error).__name__}: {error}", retryable=transient
        ) from None
