"""How a span ends in an error: a refusal is named, a bug keeps its stack trace.

The SDK's default (``record_exception``) formats the stack trace of every exception on
every span it leaves: about a millisecond of CPU each (a stat of every source file on the
stack, a parse of every line), so each refusal of a caller over its rate limit, without
a capability or with a bad argument would buy several milliseconds of tracing for a
request that cost the gate almost nothing. Colony's own errors (``ColonyError``) are
answers, not accidents: their span gets an ERROR status naming the error and
``error.type``, as OpenTelemetry's conventions ask. Anything else is a bug: every span it
leaves is marked the same way, and the first (where it escaped from) records its stack, once.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from colony.errors import ColonyError
from colony.telemetry import attributes as attrs

__all__ = ["SPAN_OPTIONS", "mark_failed"]

SPAN_OPTIONS: dict[str, Any] = {"record_exception": False, "set_status_on_exception": False}
"""For every span Colony starts: the error is ``mark_failed``'s to record, never the SDK's."""

_MAX_DESCRIPTION = 1024
_RECORDED = "_colony_stack_recorded"  # set on a bug once a span holds its stack: the spans around it need not


def mark_failed(span: Any, error: BaseException) -> None:
    """Mark ``span`` failed by ``error``: its name, and a bug's stack if no span has it yet (never a ColonyError's).

    Exceptions that are not errors (a task's cancellation, ``GeneratorExit``) leave the span as it is.
    """
    if not isinstance(error, Exception) or not span.is_recording():
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute(attrs.ERROR_TYPE, type(error).__name__)
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"[:_MAX_DESCRIPTION]))
    if isinstance(error, ColonyError) or getattr(error, _RECORDED, False):
        return
    span.record_exception(error, escaped=True)
    with suppress(AttributeError):  # an exception class with __slots__ keeps no mark: its stack may repeat
        setattr(error, _RECORDED, True)
