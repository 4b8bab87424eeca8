"""One factory turns any capability action into a Prefect task configured from its ToolSpec.

``action_task(UnitConvert)`` is the task for the tool's primary action. Called with
``arguments`` (a dict) and, for a governed action, the ``authorization`` the
Governor issued, it runs the action on the process's ToolPool instance. Caching
and retries follow the action's definition (see ``tasks.policy``), tags the spec.
The task is the execute step of ``Runtime.call`` on Prefect
(``tasks.executor.TaskExecutor``): nothing else calls it for a caller. It declares
no Prefect timeout: that cannot stop a task in a worker thread, only throw away what
it did. The call's deadline (``colony.deadlines``) reaches the action instead, which
stops its work there (a sandbox kills its command).
"""

from __future__ import annotations

from typing import Any

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.asyncutils import run_coro_as_sync

from blocks.secrets import install_secret_resolver
from colony.capability import ToolCapability
from colony.errors import UnknownActionError
from colony.runtime import Authorization, ToolPool
from colony.runtime.authorization import require_authorization
from tasks.policy import ExecutionPolicy, ToolCallCachePolicy, retry_condition_for
from tasks.storage import RESULT_SERIALIZER, result_location, storage_for

__all__ = ["POOL", "action_task"]

#: The tool instances of this process: one sandbox container per tool, shared by every flow run here.
POOL = ToolPool()
_tasks: dict[tuple[type[ToolCapability], str, ExecutionPolicy, str], Task[..., Any]] = {}


def action_task(
    capability: type[ToolCapability], action: str | None = None, policy: ExecutionPolicy | None = None
) -> Task[..., Any]:
    """The Prefect task running ``action`` (default: the primary one) of ``capability``.

    Args:
        capability: A concrete ToolCapability class.
        action: The action's name; the tool's primary action when omitted.
        policy: Retry and backoff knobs; the defaults when omitted.

    Returns:
        A task called as ``task(arguments={...}, authorization=...)``, returning the action's result.
    """
    action = action or capability.primary_action()
    if action not in capability.actions():
        known = ", ".join(sorted(capability.actions()))
        raise UnknownActionError(f"{capability.spec.name} has no action {action!r} (it has: {known})")
    key = (capability, action, policy or ExecutionPolicy(), result_location())
    if key not in _tasks:
        _tasks[key] = _build(*key)
    return _tasks[key]


def _build(capability: type[ToolCapability], action: str, policy: ExecutionPolicy, location: str) -> Task[..., Any]:
    install_secret_resolver()
    spec = capability.spec
    definition = capability.actions()[action]
    may_retry, cached, governed = definition.retriable, definition.cacheable, definition.governed
    tags = {*POOL.instance(capability).get_capability_tags(), spec.name}

    def run(arguments: dict[str, Any] | None = None, authorization: Authorization | None = None) -> Any:
        if governed:  # checked on every attempt; the Governor's executor spent it once for the call
            require_authorization(authorization, spec.name, action, spend=False)
        result = POOL.instance(capability).bound_action(action)(**(arguments or {}))
        return run_coro_as_sync(result) if definition.is_async else result

    run.__qualname__ = run.__name__ = f"{spec.name}.{action}"
    run.__doc__ = definition.summary
    options: dict[str, Any] = dict(
        name=f"{spec.name}.{action}",
        description=definition.summary,
        tags=tags,
        cache_policy=ToolCallCachePolicy(capability=capability, action=action) if cached else NO_CACHE,
        persist_result=cached,
        result_storage=storage_for(location) if cached else None,
        result_serializer=RESULT_SERIALIZER if cached else None,
        retries=policy.retries if may_retry else 0,
        retry_delay_seconds=policy.retry_delays() if may_retry else 0,
        retry_jitter_factor=policy.jitter_factor if may_retry else None,
        retry_condition_fn=retry_condition_for(capability.retryable_errors),
    )
    built: Task[..., Any] = task(run, **options)
    return built
