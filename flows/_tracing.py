"""A flow run's span: Colony's calls in the run nest under it, and the run is labelled with the trace's id.

The span carries the run's id (``prefect.flow_run.id``); the run gets the label
``colony.trace_id``, which the Prefect UI shows on the run's page: from either side, one
click (or one search) leads to the other. Off (no tracing configured) the body runs as it is.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from prefect.context import FlowRunContext

from colony.telemetry import tracer
from colony.telemetry.surfaces import current_trace_id, surface_span

__all__ = ["TRACE_LABEL", "traced"]

TRACE_LABEL = "colony.trace_id"
F = TypeVar("F", bound=Callable[..., Any])
_log = logging.getLogger(__name__)


def traced(body: F) -> F:
    """Run a (synchronous) flow body in the run's span, labelling the run with the trace id."""

    @functools.wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        context = FlowRunContext.get()
        if tracer() is None or context is None or context.flow_run is None:
            return body(*args, **kwargs)
        flow_run = context.flow_run
        values = {"prefect.flow_run.id": str(flow_run.id), "prefect.flow_run.name": flow_run.name}
        name = context.flow.name if context.flow is not None else flow_run.name
        with surface_span(f"flow {name}", "flow", values=values):
            _label(flow_run.id, current_trace_id())
            return body(*args, **kwargs)

    return cast(F, run)


def _label(flow_run_id: Any, trace_id: str | None) -> None:
    """Label the run with its trace id; a server that cannot take the label leaves the run unlabelled, not failed."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import PrefectException

    if trace_id is None:
        return
    try:
        with get_client(sync_client=True) as client:
            client.update_flow_run_labels(flow_run_id, {TRACE_LABEL: trace_id})
    except (PrefectException, OSError) as error:
        _log.warning("could not label flow run %s with its trace id: %s", flow_run_id, error)
