"""How a Colony run ends: a state named for what happened, its result kept as JSON, an artifact showing it.

The run's return value is written to Colony's result storage (``tasks.storage.persisted``)
and carried by the final state, so the Prefect UI and a caller of the deployment read it
back through the API (``State.result()``), from any process that reaches the storage.
"""

from __future__ import annotations

import json
from typing import Any

from prefect.artifacts import create_markdown_artifact
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext
from prefect.states import Completed, Failed, Running, State
from pydantic import BaseModel

from flows._verdicts import mark
from tasks.storage import persisted

__all__ = ["as_json", "finish", "leave_expired_pause", "publish"]


def finish(value: BaseModel, *, name: str, message: str, succeeded: bool) -> State[Any]:
    """The run's final state: ``Completed`` or ``Failed``, named ``name``, with ``value`` as its persisted result.

    A deployment run's engine reports a ``Failed`` end as a crash; this one is the run's own
    verdict, so ``flows._verdicts`` drops that report (an in-process caller gets the state).
    """
    if not succeeded:
        context = FlowRunContext.get()
        if context is not None and context.flow_run is not None and context.flow_run.deployment_id is not None:
            mark(context.flow_run.id)
    ending = Completed if succeeded else Failed
    return ending(name=name, message=message, data=persisted(value))


def as_json(value: Any) -> str:
    """``value`` as an indented JSON block for a markdown artifact."""
    return "```json\n" + json.dumps(value, indent=2, default=str, sort_keys=True) + "\n```"


def publish(key: str, markdown: str, description: str) -> None:
    """Attach a markdown artifact to the current run (and the key's history)."""
    create_markdown_artifact(key=key, markdown=markdown, description=description)


def leave_expired_pause() -> None:
    """Take the current run out of a pause that expired, so it can end in its own state.

    A run whose wait for a person timed out is still Paused on the server, and the server
    turns any later transition of an expired pause into a bare "never resumed" failure,
    which would drop the recorded refusal's name and summary.
    """
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(context.flow_run.id).state
        if state is not None and state.is_paused():
            client.set_flow_run_state(context.flow_run.id, Running(), force=True)
