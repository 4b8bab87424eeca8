"""How a tool action is run as a task: its cache key, its retry condition and backoff.

Whether an action is cached or retried at all is decided with its class
(``ActionDefinition.cacheable``/``.retriable``: a deterministic action without side
effects is cached, a side-effecting one retried only when declared idempotent). A cached
result is keyed on the validated arguments, the tool's name, version and class, so a
version bump or another class of the same name never reuses a result. Only transient
failures are retried: a connection error, a timeout, a ``ColonyError`` marked
``retryable`` or an exception the capability lists in ``retryable_errors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from prefect.cache_policies import CachePolicy
from prefect.client.schemas.objects import State, TaskRun
from prefect.context import TaskRunContext
from prefect.utilities.hashing import hash_objects

from colony.capability import ToolCapability
from colony.errors import ColonyError, ToolInputError

__all__ = ["ExecutionPolicy", "ToolCallCachePolicy", "is_transient", "retry_condition_for"]

_TRANSIENT: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError, httpx.TransportError)


@dataclass(frozen=True)
class ExecutionPolicy:
    """The knobs the factory applies to every action task.

    Attributes:
        retries: Further attempts after a transient failure (when the action may be retried).
        backoff_seconds: Delay before the first retry; each later one doubles it.
        jitter_factor: Prefect's ``retry_jitter_factor``: each delay varies by up to this share.
    """

    retries: int = 2
    backoff_seconds: float = 1.0
    jitter_factor: float = 0.5

    def retry_delays(self) -> list[float]:
        """Exponential backoff: ``backoff, 2*backoff, 4*backoff, ...``."""
        return [self.backoff_seconds * 2**attempt for attempt in range(self.retries)]


def is_transient(error: BaseException, declared: tuple[type[BaseException], ...] = ()) -> bool:
    """Whether a second attempt may succeed where this one failed."""
    if isinstance(error, ToolInputError):
        return False
    if isinstance(error, ColonyError):
        return error.retryable
    return isinstance(error, declared + _TRANSIENT)


def retry_condition_for(declared: tuple[type[BaseException], ...]) -> Any:
    """A Prefect ``retry_condition_fn`` retrying only transient failures."""

    def should_retry(task: Any, task_run: TaskRun, state: State[Any]) -> bool:
        error = state.data
        return isinstance(error, BaseException) and is_transient(error, declared)

    return should_retry


@dataclass
class ToolCallCachePolicy(CachePolicy):
    """Cache key: the tool's class, name, version and action, and the validated arguments.

    Arguments that fail validation give no key, so the call runs (and fails) uncached.
    """

    capability: type[ToolCapability] | None = None
    action: str = ""

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        if self.capability is None:
            return None
        try:
            arguments = self.capability.actions()[self.action].validate_input(inputs.get("arguments") or {})
        except ToolInputError:
            return None
        spec = self.capability.spec
        identity = f"{self.capability.__module__}.{self.capability.__qualname__}"
        return hash_objects(identity, spec.name, spec.version, self.action, arguments)
