"""A span's error: a ColonyError is named, a bug keeps its stack trace, a cancellation is no error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from colony.errors import ToolInputError
from colony.telemetry import configure
from colony.telemetry.failures import SPAN_OPTIONS, mark_failed


@pytest.fixture
def exported() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def messages_recorded() -> Iterator[None]:
    """Arguments (and so error messages, which may quote them) recorded, as COLONY_TRACE_ARGUMENTS=2000 asks."""
    configure({"COLONY_TRACE_ARGUMENTS": "2000"})
    try:
        yield
    finally:
        configure({})


def _fail(exported: InMemorySpanExporter, error: BaseException) -> ReadableSpan:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    with provider.get_tracer("test").start_as_current_span("step", **SPAN_OPTIONS) as span:
        mark_failed(span, error)
    [finished] = exported.get_finished_spans()
    return finished


def test_a_colony_error_is_named_without_its_stack_or_its_message(exported: InMemorySpanExporter) -> None:
    span = _fail(exported, ToolInputError("Unsupported unit: sk-live-4f9a8b7c"))  # a message may quote an argument
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "ToolInputError"
    assert span.attributes is not None and span.attributes["error.type"] == "ToolInputError"
    assert not span.events


def test_a_bug_keeps_its_stack_trace_without_its_message(exported: InMemorySpanExporter) -> None:
    argument = "-".join(["sk", "live", "4f9a8b7c"])  # a value the call was given, not in the source
    try:
        raise KeyError(argument)
    except KeyError as error:
        span = _fail(exported, error)
    [event] = span.events
    assert event.name == "exception" and event.attributes is not None
    stack = str(event.attributes["exception.stacktrace"])
    assert "test_a_bug_keeps_its_stack_trace_without_its_message" in stack and stack.endswith("builtins.KeyError")
    assert "sk-live" not in repr(event.attributes) and span.status.description == "KeyError"
    assert span.attributes is not None and span.attributes["error.type"] == "KeyError"


@pytest.mark.usefixtures("messages_recorded")
def test_messages_are_recorded_where_arguments_are(exported: InMemorySpanExporter) -> None:
    span = _fail(exported, ToolInputError("value must be a number"))
    assert span.status.description == "ToolInputError: value must be a number"
    exported.clear()
    try:
        raise KeyError("approval_id")
    except KeyError as error:
        bug = _fail(exported, error)
    [event] = bug.events
    assert event.attributes is not None and event.attributes["exception.message"] == "'approval_id'"
    assert str(event.attributes["exception.stacktrace"]).endswith("KeyError: 'approval_id'\n")


@pytest.mark.usefixtures("messages_recorded")
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
