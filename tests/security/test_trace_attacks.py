"""A refused caller cannot make tracing expensive: a refusal's spans name the error, never format its stack.

The SDK's default formats every exception's stack trace on every span it leaves, about a
millisecond of CPU each; a caller over its rate limit could make each cheap refusal cost
several. The refusals here are traced, exported over real OTLP/HTTP and decoded.
"""

from __future__ import annotations

import pytest

from colony.errors import RateLimitedError
from colony.runtime import LOCAL_OPERATOR, CallRequest, Runtime
from colony.runtime.rate_limits import RateLimitSettings
from tests.services.otlp import FakeOtlpReceiver, ReceivedSpan, flush

MILES = {"value": 10, "from_unit": "miles", "to_unit": "km"}
ERROR = 2  # OTLP's STATUS_CODE_ERROR


async def test_refusals_over_a_rate_limit_are_named_on_their_spans_without_a_stack_trace(
    traced_here: FakeOtlpReceiver,
) -> None:
    runtime = Runtime(rate_limits=RateLimitSettings.model_validate({"default": {"rate": 0.001, "burst": 1}}))
    try:
        await runtime.call(CallRequest("unit_convert", MILES), LOCAL_OPERATOR)  # the bucket's one call
        for _ in range(20):
            with pytest.raises(RateLimitedError):
                await runtime.call(CallRequest("unit_convert", MILES), LOCAL_OPERATOR)
    finally:
        await runtime.aclose()
    flush()

    def refused(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
        return [span for span in spans if span.attributes.get("error.type") == "RateLimitedError"]

    spans = traced_here.wait_for(lambda spans: len(refused(spans)) >= 20)
    calls = [span for span in refused(spans) if span.name == "execute_tool unit_convert"]
    assert len(calls) == 20
    for span in calls:
        code, description = span.status
        assert code == ERROR and description.startswith("RateLimitedError: caller 'local-operator' is over its rate")
    assert all(not span.events for span in spans), [span.events[0][0] for span in spans if span.events]
