"""Worker processes for CPU-bound tools: hostile input costs a worker, never this process's event loop.

A pure Python action that a caller can make compute for seconds (a schema validator, a
redactor over the largest text the caps allow) holds the GIL while it runs; in a thread
it slows every other request of the process and keeps running after its call has timed
out. In a server (``Runtime(isolate_cpu_bound=True)``: the gateway, ``colony mcp``), a
tool that declares ``cpu_bound = True`` therefore runs in a worker process (anyio's
process pool): the event loop stays free, and a call cancelled at its deadline kills its
worker. Callers waiting for a worker are served in turn (``colony.callers.Turns``, by the
principal the runtime authenticated): one caller's flood of costly calls waits behind its
own, never ahead of another caller's call. A library user's own process (the client's
local calls, a script) keeps threads: a worker starts by re-running the parent's main
module, as multiprocessing does, which a script without a ``__main__`` guard must not have
to know about.

    workers = WorkerProcesses()
    result = await workers.run(PiiRedact, "redact_pii", {"text": "..."})
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import anyio.to_process

from colony.callers import LoopTurns
from colony.capability import ToolCapability
from colony.errors import ColonyError, ToolExecutionError

__all__ = ["WorkerProcesses"]

_instances: dict[type[ToolCapability], ToolCapability] = {}


class WorkerProcesses:
    """At most ``limit`` calls run in worker processes at once; the rest wait in turn, under their own deadline."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit or max(2, os.cpu_count() or 1)
        self.turns = LoopTurns(self.limit)
        self.limiter = anyio.CapacityLimiter(self.limit)  # as large as the turns: it never makes a call wait

    async def run(self, cls: type[ToolCapability], action: str, arguments: dict[str, Any]) -> Any:
        """``action`` of ``cls`` in a worker, once the caller's turn comes; cancelling the call kills the worker."""
        async with self.turns.turn():
            return await anyio.to_process.run_sync(
                _call, cls, action, arguments, cancellable=True, limiter=self.limiter
            )


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
