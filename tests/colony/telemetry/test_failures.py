"""A span's error: a ColonyError is named, a bug keeps its stack trace, a cancellation is no error."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from colony.errors import ToolInputError
from colony.telemetry.failures import SPAN_OPTIONS, mark_failed


@pytest.fixture
def exported() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def _fail(exported: InMemorySpanExporter, error: BaseException) -> ReadableSpan:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    with provider.get_tracer("test").start_as_current_span("step", **SPAN_OPTIONS) as span:
        mark_failed(span, error)
    [finished] = exported.get_finished_spans()
    return finished


def test_a_colony_error_is_named_without_its_stack(exported: InMemorySpanExporter) -> None:
    span = _fail(exported, ToolInputError("value must be a number"))
    assert span.status.status_code is StatusCode.ERROR
    assert str(span.status.description).startswith("ToolInputError: value must be a number")
    assert span.attributes is not None and span.attributes["error.type"] == "ToolInputError"
    assert not span.events


def test_a_bug_keeps_its_stack_trace(exported: InMemorySpanExporter) -> None:
    try:
        raise KeyError("approval_id")
    except KeyError as error:
        span = _fail(exported, error)
    [event] = span.events
    assert event.name == "exception" and event.attributes is not None
    assert "test_a_bug_keeps_its_stack_trace" in str(event.attributes["exception.stacktrace"])
    assert span.attributes is not None and span.attributes["error.type"] == "KeyError"


def test_a_long_message_is_cut_in_the_status(exported: InMemorySpanExporter) -> None:
    span = _fail(exported, ToolInputError("x" * 50_000))
    assert span.status.description is not None and len(span.status.description) == 1024


def test_a_cancellation_is_not_an_error(exported: InMemorySpanExporter) -> None:
    span = _fail(exported, asyncio.CancelledError())
    assert span.status.status_code is StatusCode.UNSET and not span.events


def test_a_bugs_stack_is_recorded_once_on_the_span_it_escaped_from(exported: InMemorySpanExporter) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    tracer = provider.get_tracer("test")
    try:
        raise KeyError("approval_id")
    except KeyError as error:
        with tracer.start_as_current_span("call", **SPAN_OPTIONS) as outer:
            with tracer.start_as_current_span("stage", **SPAN_OPTIONS) as inner:
                mark_failed(inner, error)
            mark_failed(outer, error)
    stage, call = exported.get_finished_spans()
    assert [event.name for event in stage.events] == ["exception"] and not call.events
    assert call.status.status_code is StatusCode.ERROR and call.attributes is not None
    assert call.attributes["error.type"] == "KeyError"
