"""An unsampled call makes no stage spans: they would only be unsampled children of its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from colony.runtime import LOCAL_OPERATOR, CallRequest, Runtime
from colony.telemetry import configure, tracing
from tests.services.otlp import FakeOtlpReceiver

MILES = {"value": 10, "from_unit": "miles", "to_unit": "km"}


class SpanCounter:
    """A spy around the real tracer: the names of the spans started through it."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.started: list[str] = []

    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.started.append(name)
        return self.real.start_as_current_span(name, *args, **kwargs)


@pytest.fixture
def traced(otlp_receiver: FakeOtlpReceiver, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Configure tracing with the sampler the test sets first; yields a function that counts one call's spans."""

    async def spans_of_one_call(sampler: str) -> list[str]:
        monkeypatch.setenv("OTEL_TRACES_SAMPLER", sampler)  # the SDK reads its sampler from the environment
        configure({"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.endpoint})
        counter = SpanCounter(tracing.tracer())
        runtime = Runtime()
        # The spy only for this call: undone on leaving, so the teardown's configure({}) turns tracing off for good.
        with monkeypatch.context() as spying:
            spying.setitem(tracing.STATE, "tracer", counter)
            try:
                outcome = await runtime.call(CallRequest("unit_convert", MILES), LOCAL_OPERATOR)
            finally:
                await runtime.aclose()
        assert outcome.result is not None and outcome.result["value"] == 16.0934
        return counter.started

    try:
        yield spans_of_one_call
    finally:
        configure({})


async def test_a_sampled_call_has_its_stage_spans_and_an_unsampled_one_only_its_own(traced: Any) -> None:
    assert await traced("always_on") == ["execute_tool unit_convert", "colony.authorize", "colony.execute"]
    assert await traced("always_off") == ["execute_tool unit_convert"]
    # The spy is gone once its call is: left in place, the fixture's teardown would restore a tracer
    # of a stopped provider after turning tracing off, and later tests in this worker would trace.
    assert not isinstance(tracing.tracer(), SpanCounter)
