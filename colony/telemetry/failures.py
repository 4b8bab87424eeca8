"""How a span ends in an error: a refusal is named, a bug keeps its stack trace, no argument leaks.

The SDK's default (``record_exception``) formats the stack trace of every exception on
every span it leaves: about a millisecond of CPU each (a stat of every source file on the
stack, a parse of every line), so each refusal of a caller over its rate limit, without
a capability or with a bad argument would buy several milliseconds of tracing for a
request that cost the gate almost nothing. Colony's own errors (``ColonyError``) are
answers, not accidents: their span gets an ERROR status naming the error and
``error.type``, as OpenTelemetry's conventions ask. Anything else is a bug: every span it
leaves is marked the same way, and the first (where it escaped from) records its stack, once.

An error's message may quote the caller's arguments ("Unsupported unit: <the value>", a
JSON Schema's "<the value> is not of type 'string'"), and arguments are never recorded by
default: the message is recorded (in the status and a bug's event) only where
``COLONY_TRACE_ARGUMENTS`` asks for arguments, cut to that length.
"""

from __future__ import annotations

import traceback
from contextlib import suppress
from typing import Any

from colony.errors import ColonyError
from colony.telemetry import attributes as attrs
from colony.telemetry.tracing import settings

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

    name = type(error).__name__
    message = _message(error)
    span.set_attribute(attrs.ERROR_TYPE, name)
    span.set_status(Status(StatusCode.ERROR, f"{name}: {message}"[:_MAX_DESCRIPTION] if message else name))
    if isinstance(error, ColonyError) or getattr(error, _RECORDED, False):
        return
    qualified = f"{type(error).__module__}.{type(error).__qualname__}"
    if message is None:  # the frames, not the message: the stack's last line would quote it
        stack = "Traceback (most recent call last):\n" + "".join(traceback.format_tb(error.__traceback__)) + qualified
    else:
        stack = "".join(traceback.format_exception(error))
    span.add_event(
        "exception",
        {
            "exception.type": qualified,
            "exception.message": message or "",
            "exception.stacktrace": stack,
            "exception.escaped": True,
        },
    )
    with suppress(AttributeError):  # an exception class with __slots__ keeps no mark: its stack may repeat
        setattr(error, _RECORDED, True)


def _message(error: Exception) -> str | None:
    """The error's message as a span may show it: None unless arguments are recorded, then cut to their length."""
    limit = settings().capture_bytes
    return str(error)[:limit] if limit else None
