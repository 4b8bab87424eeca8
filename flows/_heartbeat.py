"""Colony's own flow-run heartbeat: every beat precedes the run's final state.

Prefect's engine beats from a thread that may read the state just before the run
finishes and send its beat just after: the beat's ``occurred`` then follows the
``Completed`` event, and a zombie automation waiting for "another beat or a final
state after this beat" fires on a healthy, finished run (PrefectHQ/prefect#18653,
#21932), failing with "Run is already in terminal state". ``beating`` wraps a Colony
flow's body instead: it beats every ``HEARTBEAT_SECONDS`` (``COLONY_HEARTBEAT_SECONDS``)
while the body runs, and stops and joins its thread before the body returns or raises, so
the last beat is created before the engine proposes the final (or paused) state.

A body that suspends its run proposes the Suspended state itself, so it first calls
``stop_beating``: a beat sent after the Suspended event would open a zombie window that
only the resumed run's first beat closes, and a run that takes longer than the window to
start again after its resume would be marked Crashed while it starts.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from prefect.context import FlowRunContext
from prefect.events import emit_event
from prefect.events.worker import EventsWorker
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["HEARTBEAT_EVENT", "HEARTBEAT_SECONDS", "HeartbeatSettings", "beating", "stop_beating"]

HEARTBEAT_EVENT = "colony.flow-run.heartbeat"
HEARTBEAT_SECONDS = 30  # a run is a zombie after three missed beats (colony.cli.zombies)
SEND_WAIT_SECONDS = 10  # how long stopping waits for the beats already emitted to be sent

_stop_current: ContextVar[Callable[[], None] | None] = ContextVar("colony_stop_beating", default=None)


class HeartbeatSettings(BaseSettings):
    """How often a Colony flow run beats (``COLONY_HEARTBEAT_SECONDS``), read as each run starts."""

    model_config = SettingsConfigDict(env_prefix="COLONY_", extra="ignore")

    heartbeat_seconds: int = Field(
        default=HEARTBEAT_SECONDS,
        gt=0,
        le=3600,
        description="Seconds between a flow run's heartbeats; the zombie window (COLONY_ZOMBIE_SECONDS) must be "
        "longer. Set the same value where runs run and where `colony deploy` or `colony up` runs.",
    )


logger = logging.getLogger("colony.flows")
F = TypeVar("F", bound=Callable[..., Any])


def _beat_event() -> tuple[dict[str, str], list[dict[str, str]]] | None:
    """The beat's resource (the flow run) and related resources (its flow, deployment and tags)."""
    context = FlowRunContext.get()
    run = context.flow_run if context is not None else None
    if run is None:
        return None
    resource = {"prefect.resource.id": f"prefect.flow-run.{run.id}", "prefect.resource.name": run.name or ""}
    related = [{"prefect.resource.id": f"prefect.flow.{run.flow_id}", "prefect.resource.role": "flow"}]
    if run.deployment_id is not None:
        related.append(
            {"prefect.resource.id": f"prefect.deployment.{run.deployment_id}", "prefect.resource.role": "deployment"}
        )
    related += [{"prefect.resource.id": f"prefect.tag.{tag}", "prefect.resource.role": "tag"} for tag in run.tags]
    return resource, related


@contextmanager
def _beats(seconds: float) -> Iterator[None]:
    event = _beat_event()
    if event is None:  # called outside a flow run: nothing to beat for
        yield
        return
    resource, related = event
    stop = threading.Event()

    def beat() -> None:
        while True:
            try:
                emit_event(HEARTBEAT_EVENT, resource=resource, related=related)
            except Exception:  # a missed beat is what the automation judges; never the run's failure
                logger.debug("could not emit a heartbeat", exc_info=True)
            if stop.wait(seconds):
                return

    def halt() -> None:
        stop.set()
        thread.join()

    thread = threading.Thread(target=contextvars.copy_context().run, args=(beat,), daemon=True, name="colony-beat")
    thread.start()
    token = _stop_current.set(halt)
    try:
        yield
    finally:
        _stop_current.reset(token)
        halt()


def stop_beating() -> None:
    """Stop the current run's beat and wait (boundedly) until every beat emitted has been sent.

    For a body about to suspend its run: the Suspended event then follows its last beat.
    Outside a beating run it does nothing.
    """
    halt = _stop_current.get()
    if halt is None:
        return
    halt()
    sent = threading.Thread(target=EventsWorker.instance().wait_until_empty, daemon=True, name="colony-beat-send")
    sent.start()
    sent.join(SEND_WAIT_SECONDS)  # a beat the events API never takes is a missed beat, not a stuck run


def beating(fn: F) -> F:
    """Beat while ``fn`` (a flow's body, sync or async) runs; put it under ``@flow``.

    The wrapper carries ``fn``'s signature with its annotations evaluated: Prefect resolves a
    flow's parameter types in the namespace of the function it is given, which is this module's.
    """
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def beating_async(*args: Any, **kwargs: Any) -> Any:
            with _beats(HeartbeatSettings().heartbeat_seconds):
                return await fn(*args, **kwargs)

        wrapper: Any = beating_async
    else:

        @functools.wraps(fn)
        def beating_sync(*args: Any, **kwargs: Any) -> Any:
            with _beats(HeartbeatSettings().heartbeat_seconds):
                return fn(*args, **kwargs)

        wrapper = beating_sync
    wrapper.__signature__ = inspect.signature(fn, eval_str=True)
    return cast(F, wrapper)
