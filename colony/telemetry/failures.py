"""How a span ends in an error: a refusal is named, a bug keeps its stack trace.

The SDK's default (``record_exception``) formats the stack trace of every exception on
every span it leaves: about a millisecond of CPU each (a stat of every source file on the
stack, a parse of every line), so each refusal of a caller over its rate limit, without
a capability or with a bad argument would buy several milliseconds of tracing for a
request that cost the gate almost nothing. Colony's own errors (``ColonyError``) are
answers, not accidents: their span gets an ERROR status naming the error and
``error.type``, as OpenTelemetry's conventions ask. Anything else is a bug, recorded
with its stack on the spans that ask for it.
"""

from __future__ import annotations

from typing import Any

from colony.errors import ColonyError
from colony.telemetry import attributes as attrs

__all__ = ["SPAN_OPTIONS", "mark_failed"]

SPAN_OPTIONS: dict[str, Any] = {"record_exception": False, "set_status_on_exception": False}
"""For every span Colony starts: the error is ``mark_failed``'s to record, never the SDK's."""

_MAX_DESCRIPTION = 1024


def mark_failed(span: Any, error: BaseException, *, stack: bool = True) -> None:
    """Mark ``span`` failed by ``error``; with ``stack``, a bug's stack trace too (never a ColonyError's).

    Exceptions that are not errors (a task's cancellation, ``GeneratorExit``) leave the span as it is.
    """
    if not isinstance(error, Exception) or not span.is_recording():
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute(attrs.ERROR_TYPE, type(error).__name__)
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"[:_MAX_DESCRIPTION]))
    if stack and not isinstance(error, ColonyError):
        span.record_exception(error, escaped=True)
