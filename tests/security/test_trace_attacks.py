"""Traced failures: a refusal's spans name the error, never format its stack, never quote an argument.

The SDK's default formats every exception's stack trace on every span it leaves, about a
millisecond of CPU each; a caller over its rate limit could make each cheap refusal cost
several. And an error's message may quote the arguments a span never records by default.
The failures here are traced, exported over real OTLP/HTTP and decoded.
"""

from __future__ import annotations

import pytest

from colony.errors import RateLimitedError, ToolInputError
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
        assert (code, description) == (ERROR, "RateLimitedError")
    assert all(not span.events for span in spans), [span.events[0][0] for span in spans if span.events]


async def test_an_error_quoting_a_secret_argument_leaves_it_in_no_span(traced_here: FakeOtlpReceiver) -> None:
    # unit_convert answers "Unsupported unit: <the unit>"; the status description used to carry it.
    secret = "sk-live-4f9a8b7c6d5e4f3a"
    runtime = Runtime()
    try:
        with pytest.raises(ToolInputError, match=secret):  # the caller is told what was wrong
            await runtime.call(CallRequest("unit_convert", {**MILES, "from_unit": secret}), LOCAL_OPERATOR)
    finally:
        await runtime.aclose()
    flush()
    spans = traced_here.wait_for(lambda spans: any(span.name == "execute_tool unit_convert" for span in spans))
    [call] = [span for span in spans if span.name == "execute_tool unit_convert"]
    assert call.status == (ERROR, "ToolInputError")
    assert not [span.name for span in spans if secret in repr(span)]
