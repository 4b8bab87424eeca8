"""Waiting for a person to approve a held action, as a typed Prefect run input.

A run started in-process pauses and keeps polling (``pause_flow_run``); a run started from
a deployment suspends (``suspend_flow_run``), so no worker is held while a person decides:
the run exits and starts again from the top once resumed, with its cached steps reused, and
reads the decision it was resumed with under the same pause key (suspending again would only
be refused by the server, after logging "Suspending flow run" a second time). Whether it was
resumed is read from that input, not from the run's pause keys: the server clears those when
a crashed run is scheduled again, and a run that crashed after its resume would otherwise ask
for the decision a person already gave (and the server would delete that decision as it
suspended again).
The Prefect UI shows the form for ``ApprovalInput`` on the paused run's page, under a
description that points to the reviewer's artifact (``flows.holds``).

A suspended run's pause on the server outlasts its wait by ``RESUME_GRACE_SECONDS``: the
tick expires the request when the wait is over and resumes the run, so that it ends in its
own ``Expired`` state; a pause that lapsed on the server could only fail the run.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run, suspend_flow_run
from prefect.input import RunInput
from prefect.input.run_input import keyset_from_paused_state
from prefect.logging import get_run_logger
from prefect.states import Suspended
from pydantic import Field, ValidationError

from flows._heartbeat import stop_beating

__all__ = ["APPROVAL_KEY", "RESUME_GRACE_SECONDS", "ApprovalInput", "wait_for_approval"]

APPROVAL_KEY = "colony-approval"
RESUME_GRACE_SECONDS = 600


class ApprovalInput(RunInput):
    """A person's decision on an action the gate held."""

    approve: bool = Field(description="Approve (run the action) or reject (record the refusal).")
    reviewer: str = Field(
        min_length=1,
        description="Your name, e.g. an email address: shown beside prefect-operator, which the record names "
        "(the Prefect UI carries no Colony identity).",
    )
    note: str = Field(default="", description="Why, in a sentence; recorded with the outcome.")


def started_from_deployment() -> bool:
    """Whether the current flow run belongs to a deployment (and so can be rescheduled)."""
    context = FlowRunContext.get()
    return bool(context and context.flow_run and context.flow_run.deployment_id)


def resumed_with() -> ApprovalInput | None:
    """The decision a resumed run was given (the Resume input saved under its pause key), or None.

    Prefect's resume checks the input against the form; one written straight to the inputs API
    is not checked. A saved input that is no decision is none: the run asks again (and the
    server deletes that input as the new pause fires), saying what was wrong in its log.
    """
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None
    keyset = keyset_from_paused_state(Suspended(pause_key=APPROVAL_KEY))
    with get_client(sync_client=True) as client:
        try:
            given = client.read_flow_run_input(context.flow_run.id, keyset["response"])
        except httpx.HTTPStatusError as error:
            if error.response.status_code == 404:
                return None
            raise
    try:
        return ApprovalInput.model_validate_json(given)
    except ValidationError as error:
        get_run_logger().warning("The decision saved for this run is not one, so it is asked for again: %s", error)
        return None


def wait_for_approval(
    timeout_seconds: int, poll_seconds: int, describe: Callable[[], str] = str
) -> ApprovalInput | None:
    """The person's decision, or None when nobody decided within ``timeout_seconds``.

    ``describe()`` (markdown, shown above the Resume form) is called only when the run is about
    to wait, never by a run that reads the decision it was resumed with.
    """
    deployed = started_from_deployment()
    if deployed:
        decided = resumed_with()
        if decided is not None:
            return decided
    description = describe()
    form = ApprovalInput.with_initial_data(description=description) if description else ApprovalInput
    try:
        if deployed:
            stop_beating()  # the Suspended event must follow the run's last beat (flows._heartbeat)
            timeout = timeout_seconds + RESUME_GRACE_SECONDS
            return suspend_flow_run(wait_for_input=form, timeout=timeout, key=APPROVAL_KEY)
        return pause_flow_run(
            wait_for_input=form, timeout=timeout_seconds, poll_interval=poll_seconds, key=APPROVAL_KEY
        )
    except FlowPauseTimeout:
        return None
