"""The surface's span a call's trace starts with: an MCP method, a CLI command, a flow run, an agent's tool call.

A caller's trace continues: a W3C ``traceparent`` (and ``tracestate``) in the carrier
given (an MCP request's ``_meta``, HTTP headers) is the span's parent. Off, no span.
Where a library already opened the surface's span (the MCP SDK opens a server span for
every request, continuing the same ``_meta``), Colony's attributes join that span rather
than adding a twin beside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from colony.telemetry import attributes as attrs
from colony.telemetry.failures import SPAN_OPTIONS, mark_failed
from colony.telemetry.tracing import tracer

__all__ = ["current_trace_id", "surface_span"]


@contextmanager
def surface_span(
    name: str,
    surface: str,
    *,
    carrier: Mapping[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
    join: str | None = None,
) -> Iterator[Any]:
    """A span for ``surface`` (``mcp``, ``cli``, ``flow``, ``agent``) named ``name``; yields it (None when off).

    ``values`` are more attributes (None values left out). With ``join``, a recording span of
    that name already current (in the carrier's trace, if it names one) takes the attributes
    instead of a new span.
    """
    active = tracer()
    if active is None:
        yield None
        return
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind

    parent = extract(carrier) if carrier else None
    shown = {attrs.SURFACE: surface, **{key: value for key, value in (values or {}).items() if value is not None}}
    current = trace.get_current_span()
    if join is not None and _opened_as(current, join, parent):
        current.set_attributes(shown)
        yield current
        return
    kind = SpanKind.SERVER if surface == "mcp" else SpanKind.INTERNAL
    with active.start_as_current_span(name, context=parent, kind=kind, attributes=shown, **SPAN_OPTIONS) as span:
        try:
            yield span
        except Exception as error:
            mark_failed(span, error)
            raise


def _opened_as(span: Any, name: str, parent: Any) -> bool:
    """Whether ``span`` is a recording span named ``name`` in the trace ``parent`` (if any) names."""
    if not span.is_recording() or getattr(span, "name", None) != name:
        return False
    if parent is None:
        return True
    from opentelemetry import trace

    return bool(span.get_span_context().trace_id == trace.get_current_span(parent).get_span_context().trace_id)


def extract(carrier: Mapping[str, Any]) -> Any:
    """The context a W3C ``traceparent`` in ``carrier`` names (None without one)."""
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    text = {key.lower(): value for key, value in carrier.items() if isinstance(value, str)}
    if "traceparent" not in text:
        return None
    return TraceContextTextMapPropagator().extract(text)


def current_trace_id() -> str | None:
    """The current trace's id as 32 hex digits, or None when no span is recording."""
    if tracer() is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None
