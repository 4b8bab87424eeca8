"""One factory turns any capability action into a Prefect task configured from its ToolSpec.

``action_task(UnitConvert)`` is the task for the tool's primary action. Called with
``arguments`` (a dict), it checks the tool's secrets, validates and runs the action.
Caching, retries, timeout and tags come from the spec (see ``tasks.policy``). When the
capability declares a rollback for the action, the task registers a transaction rollback
hook that calls it, so a failure later in the enclosing ``transaction()`` undoes the effect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.transactions import Transaction, get_transaction
from prefect.utilities.asyncutils import run_coro_as_sync

from blocks.secrets import install_secret_resolver
from colony.capability import ToolCapability
from colony.errors import ToolInputError, UnknownActionError
from colony.secrets import resolve_secret
from tasks.policy import (
    ExecutionPolicy,
    ToolCallCachePolicy,
    cacheable,
    retriable,
    retry_condition_for,
)
from tasks.storage import result_location, storage_for

__all__ = ["RollbackLog", "action_task", "capability_instance", "rollback_log"]

_ARGUMENTS = "colony.arguments"
_instances: dict[type[ToolCapability], ToolCapability] = {}
_tasks: dict[tuple[type[ToolCapability], str, ExecutionPolicy, str], Task[..., Any]] = {}

#: Rollbacks run in the current context: ``(action, error or None)`` per rollback hook.
RollbackLog = list[tuple[str, str | None]]
rollback_log: ContextVar[RollbackLog | None] = ContextVar("colony_rollback_log", default=None)


def capability_instance(capability: type[ToolCapability]) -> ToolCapability:
    """One instance per class and process, so a sandbox container or client is reused."""
    if capability not in _instances:
        _instances[capability] = capability()
    return _instances[capability]


def action_task(
    capability: type[ToolCapability], action: str | None = None, policy: ExecutionPolicy | None = None
) -> Task[..., Any]:
    """The Prefect task running ``action`` (default: the primary one) of ``capability``.

    Args:
        capability: A concrete ToolCapability class.
        action: The action's name; the tool's primary action when omitted.
        policy: Retry, backoff and timeout knobs; the defaults when omitted.

    Returns:
        A task called as ``task(arguments={...})``, returning the action's result.
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
    rollback = capability.rollback_actions.get(action)
    expected = spec.resource_requirements.expected_wallclock_seconds
    may_retry = retriable(capability, action)
    cached = cacheable(capability, action)
    tags = {*capability_instance(capability).get_capability_tags(), spec.name}

    def prepare(arguments: dict[str, Any] | None) -> dict[str, Any]:
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ToolInputError(f"arguments must be a JSON object, got {type(arguments).__name__}", action=action)
        for requirement in spec.secrets:
            resolve_secret(requirement)
        if rollback is not None:
            transaction = get_transaction()
            if transaction is not None:
                transaction.set(_ARGUMENTS, dict(arguments or {}))
        return dict(arguments or {})

    def run(arguments: dict[str, Any] | None = None) -> Any:
        result = capability_instance(capability).bound_action(action)(**prepare(arguments))
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
        retries=policy.retries if may_retry else 0,
        retry_delay_seconds=policy.retry_delays() if may_retry else 0,
        retry_jitter_factor=policy.jitter_factor if may_retry else None,
        retry_condition_fn=retry_condition_for(capability.retryable_errors),
        timeout_seconds=expected * policy.timeout_factor if expected else None,
    )
    built: Task[..., Any] = task(run, **options)
    if rollback is not None:
        built.on_rollback(_rollback_hook(capability, rollback))
    return built


def _rollback_hook(capability: type[ToolCapability], rollback: str) -> Callable[[Transaction], None]:
    declared = set(capability.actions()[rollback].input_model.model_fields)

    def undo(transaction: Transaction) -> None:
        original = transaction.get(_ARGUMENTS, {})
        arguments = {name: value for name, value in original.items() if name in declared}
        log = rollback_log.get()
        try:
            result = capability_instance(capability).invoke(rollback, arguments)
            run_coro_as_sync(result)
        except Exception as error:
            if log is not None:
                log.append((rollback, f"{type(error).__name__}: {error}"))
            raise
        if log is not None:
            log.append((rollback, None))

    undo.__name__ = f"rollback:{capability.spec.name}.{rollback}"
    return undo
