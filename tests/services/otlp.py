"""A fake OTLP/HTTP trace receiver: POST /v1/traces, protobuf decoded with ``opentelemetry-proto``, spans kept.

A real exporter (the SDK's ``OTLPSpanExporter``) sends to it over real HTTP; tests
read back the spans as plain records and wait for the ones they expect.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.services import free_port


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, decoded."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    links: tuple[tuple[str, str], ...] = ()  # (trace id, span id) of each link
    status: tuple[int, str] = (0, "")  # (code: 0 unset, 1 ok, 2 error; description)
    events: tuple[tuple[str, dict[str, Any]], ...] = ()  # (name, attributes) of each event


@dataclass
class FakeOtlpReceiver:
    """The receiver's spans, and its endpoint for ``OTEL_EXPORTER_OTLP_ENDPOINT``."""

    endpoint: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, found: Callable[[list[ReceivedSpan]], bool], timeout: float = 15.0) -> list[ReceivedSpan]:
        """The spans received, once ``found(spans)`` holds (fails after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                spans = list(self.spans)
            if found(spans):
                return spans
            time.sleep(0.05)
        names = sorted({span.name for span in spans})
        pytest.fail(f"the spans expected never arrived; received {len(spans)}: {names}")

    def trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self.lock:
            return [span for span in self.spans if span.trace_id == trace_id]

    def clear(self) -> None:
        with self.lock:
            self.spans.clear()


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def _decode(body: bytes) -> list[ReceivedSpan]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = {item.key: _value(item.value) for item in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        kind=span.kind,
                        attributes={item.key: _value(item.value) for item in span.attributes},
                        resource=resource,
                        links=tuple((link.trace_id.hex(), link.span_id.hex()) for link in span.links),
                        status=(span.status.code, span.status.message),
                        events=tuple(
                            (event.name, {item.key: _value(item.value) for item in event.attributes})
                            for event in span.events
                        ),
                    )
                )
    return spans


@pytest.fixture(scope="session")
def otlp_receiver() -> Iterator[FakeOtlpReceiver]:
    """A fake OTLP/HTTP receiver on a loopback port for the whole session."""
    port = free_port()
    receiver = FakeOtlpReceiver(endpoint=f"http://127.0.0.1:{port}")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            spans = _decode(body)
            with receiver.lock:
                receiver.spans.extend(spans)
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def traced_here(otlp_receiver: FakeOtlpReceiver) -> Iterator[FakeOtlpReceiver]:
    """Tracing on in this process for the test, exporting to the fake receiver (off again after it)."""
    from colony.telemetry import configure

    otlp_receiver.clear()
    configure({"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.endpoint, "OTEL_SERVICE_NAME": "colony-in-process"})
    try:
        yield otlp_receiver
    finally:
        configure({})


def flush() -> None:
    """Export what this process's tracer has batched, now."""
    from colony.telemetry.tracing import provider

    exporting = provider()
    if exporting is not None:
        exporting.force_flush()
