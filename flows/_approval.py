"""Waiting for a person to approve a held action, as a typed Prefect run input.

A run started in-process pauses and keeps polling (``pause_flow_run``); a run started from
a deployment suspends (``suspend_flow_run``), so no worker is held while a person decides:
the run exits and starts again from the top once resumed, with its cached steps reused.
The Prefect UI shows the form for ``ApprovalInput`` on the paused run's page.
"""

from __future__ import annotations

from prefect.context import FlowRunContext
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run, suspend_flow_run
from prefect.input import RunInput
from pydantic import Field

__all__ = ["APPROVAL_KEY", "ApprovalInput", "wait_for_approval"]

APPROVAL_KEY = "colony-approval"


class ApprovalInput(RunInput):
    """A person's decision on an action the gate held."""

    approve: bool = Field(description="Approve (run the action) or reject (record the refusal).")
    reviewer: str = Field(min_length=1, description="Who decided, e.g. an email address.")
    note: str = Field(default="", description="Why, in a sentence; recorded with the outcome.")


def started_from_deployment() -> bool:
    """Whether the current flow run belongs to a deployment (and so can be rescheduled)."""
    context = FlowRunContext.get()
    return bool(context and context.flow_run and context.flow_run.deployment_id)


def wait_for_approval(timeout_seconds: int, poll_seconds: int) -> ApprovalInput | None:
    """The person's decision, or None when nobody decided within ``timeout_seconds``."""
    try:
        if started_from_deployment():
            return suspend_flow_run(wait_for_input=ApprovalInput, timeout=timeout_seconds, key=APPROVAL_KEY)
        return pause_flow_run(
            wait_for_input=ApprovalInput, timeout=timeout_seconds, poll_interval=poll_seconds, key=APPROVAL_KEY
        )
    except FlowPauseTimeout:
        return None
