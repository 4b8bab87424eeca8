"""The execute step: run one validated action on the pool's instance, under the call's deadline.

The executor is the one place an action runs for a caller, and it demands an
Authorization for every governed action (see ``colony.runtime.authorization``).
The Prefect layer plugs in its own executor (the action as a task, cached and
retried by determinism) with the same demand.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.to_thread

from colony.capability import ActionDefinition
from colony.deadlines import deadline_scope, kill_grace
from colony.errors import CallTimeoutError, ColonyError, ToolExecutionError
from colony.runtime.authorization import Authorization, require_authorization
from colony.runtime.catalog import CatalogTool
from colony.runtime.pool import ToolPool
from colony.runtime.workers import WorkerProcesses

__all__ = ["BlockingAction", "Execution", "Executor", "InProcessExecutor", "as_tool_error", "timed_out"]

# A pure tool that declares a CPU cost under this runs on the event loop: a thread
# hop would cost more than the call. A tool that declares no cost gets a thread.
_INLINE_CPU_SECONDS = 0.001


@dataclass(frozen=True)
class Execution:
    """What running an action gave: its result, and whether it came from a cache of an identical call."""

    result: Any
    cached: bool = False


BlockingAction = Callable[[dict[str, Any], Authorization | None], Any]
"""An action as a plain call, for a worker thread: validated arguments and the authorization in, the result out."""


class Executor(Protocol):
    """Runs one action of one tool with validated arguments, under the call's deadline (``colony.deadlines``)."""

    #: The longest any call may run here; a call's own timeout and its budget can only shorten it.
    timeout_seconds: float

    async def run(
        self, tool: CatalogTool, action: str, arguments: dict[str, Any], authorization: Authorization | None
    ) -> Execution:
        """The action's result; a governed action without a valid authorization raises UngatedActionError."""
        ...

    def blocking(self, tool: CatalogTool, action: str) -> BlockingAction | None:
        """How this executor runs a governed call's steps: ``action`` as a plain call, or None.

        A plain call runs in the worker thread that carries the gate and the record too (one
        hop, under the deadline ``run`` would apply); None runs it through ``run`` on the
        event loop, between a hop for the steps before it and one for the record.
        """
        ...


class InProcessExecutor:
    """Runs actions for this process: coroutines on the loop, blocking work on a thread, CPU-bound work in a worker."""

    def __init__(
        self, pool: ToolPool, *, timeout_seconds: float = 30.0, workers: WorkerProcesses | None = None
    ) -> None:
        self.pool = pool
        self.timeout_seconds = timeout_seconds
        self.workers = workers

    async def run(
        self, tool: CatalogTool, action: str, arguments: dict[str, Any], authorization: Authorization | None
    ) -> Execution:
        """Run ``action`` under the timeout; foreign failures become ToolExecutionError."""
        return Execution(await self._run(tool, action, arguments, authorization))

    def blocking(self, tool: CatalogTool, action: str) -> BlockingAction | None:
        """``action`` as a plain call for a thread the caller runs anyway, when ``run`` would give it a thread.

        None for a coroutine, for CPU-bound work bound for a worker process and for a pure call
        run on the loop. The Governor runs the gate, this call and the record in one worker
        thread, under the deadline ``run`` would apply (at most ``timeout_seconds`` from the
        action's start). Like ``run``, it demands the authorization and turns failures into
        Colony errors.
        """
        definition = tool.cls.actions()[action]
        if definition.is_async or (tool.cls.cpu_bound and self.workers is not None) or _runs_inline(tool, definition):
            return None

        def call(arguments: dict[str, Any], authorization: Authorization | None) -> Any:
            if tool.governed(action):
                require_authorization(authorization, tool.name, action)
            try:
                return self.pool.instance(tool.cls).bound_action(action)(**arguments)
            except Exception as error:  # a tool's own bug reaches the caller as an answer, not a traceback
                raise as_tool_error(tool, error) from error

        return call

    def timed_out(self, tool: CatalogTool, seconds: float | None = None) -> CallTimeoutError:
        """The error of a call of ``tool`` that did not finish within its deadline of ``seconds``."""
        return timed_out(tool, self.timeout_seconds if seconds is None else seconds)

    async def _run(
        self, tool: CatalogTool, action: str, arguments: dict[str, Any], authorization: Authorization | None
    ) -> Any:
        definition = tool.cls.actions()[action]
        if definition.governed:
            require_authorization(authorization, tool.name, action)
        instance = self.pool.instance(tool.cls)
        try:
            if not definition.is_async and _runs_inline(tool, definition):
                return instance.bound_action(action)(**arguments)  # a pure call this short runs on the loop
            # The deadline travels with the call (a sandbox kills its command at it and answers
            # with what it did); a call still running a grace later is cancelled, and the
            # cancellation kills what the call started before it is reported.
            left = self.timeout_seconds
            with deadline_scope(left) as left:
                async with asyncio.timeout(left + kill_grace(left)):  # asyncio's own: cheaper than a cancel scope
                    if definition.is_async:
                        return await instance.invoke(action, arguments)
                    if tool.cls.cpu_bound and self.workers is not None:
                        return await self.workers.run(tool.cls, action, arguments)
                    method = functools.partial(instance.bound_action(action), **arguments)
                    return await anyio.to_thread.run_sync(method, abandon_on_cancel=True)
        except TimeoutError:
            raise self.timed_out(tool, left) from None
        except Exception as error:  # a tool's own bug reaches the caller as an answer, not a traceback
            raise as_tool_error(tool, error) from error


def timed_out(tool: CatalogTool, seconds: float) -> CallTimeoutError:
    """The error of a call of ``tool`` still running at its deadline of ``seconds`` (plus the grace)."""
    return CallTimeoutError(f"{tool.name} did not finish within {round(seconds, 2):g} s")


def as_tool_error(tool: CatalogTool, error: Exception) -> ColonyError:
    """A failure as the caller sees it: a Colony error as it is, anything else as a ToolExecutionError.

    A dropped connection or a timeout inside the tool is marked retryable: a second attempt may succeed.
    """
    if isinstance(error, ColonyError):
        return error
    transient = isinstance(error, ConnectionError | TimeoutError)
    return ToolExecutionError(f"{tool.name} failed: {type(error).__name__}: {error}", retryable=transient)


def _runs_inline(tool: CatalogTool, definition: ActionDefinition) -> bool:
    declared = tool.cls.spec.cost_model.cpu_seconds
    return not definition.governed and 0 < declared < _INLINE_CPU_SECONDS
