"""Arguments and results in a span only when asked for, redacted and bounded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from colony.runtime import LOCAL_OPERATOR, CallRequest, Runtime
from colony.telemetry import configure
from colony.telemetry.redaction import redacted
from tests.services.otlp import FakeOtlpReceiver, flush

MILES = {"value": 10, "from_unit": "miles", "to_unit": "km"}


@pytest.fixture
def capturing(otlp_receiver: FakeOtlpReceiver) -> Iterator[FakeOtlpReceiver]:
    otlp_receiver.clear()
    configure({"OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.endpoint, "COLONY_TRACE_ARGUMENTS": "64"})
    try:
        yield otlp_receiver
    finally:
        configure({})


def test_secret_looking_fields_are_replaced_and_the_text_is_cut() -> None:
    shown = redacted({"api_key": "sk-live-1", "nested": {"password": "hunter2", "path": "/tmp/x"}, "n": 1}, 200)
    assert "sk-live-1" not in shown and "hunter2" not in shown and "/tmp/x" in shown
    assert shown.count("[redacted]") == 2
    assert len(redacted({"text": "x" * 500}, 40)) == 40


async def test_a_call_records_its_arguments_and_result_when_asked(capturing: FakeOtlpReceiver) -> None:
    runtime = Runtime()
    try:
        await runtime.call(CallRequest("unit_convert", MILES), LOCAL_OPERATOR)
    finally:
        await runtime.aclose()
    flush()
    [call] = [s for s in capturing.wait_for(lambda spans: bool(spans)) if s.name == "execute_tool unit_convert"]
    assert '"from_unit": "miles"' in call.attributes["colony.arguments"]
    assert "16.09" in call.attributes["colony.result"] and len(call.attributes["colony.result"]) <= 64


def test_a_bad_capture_setting_is_named() -> None:
    from colony.errors import SettingsError

    with pytest.raises(SettingsError, match="COLONY_TRACE_ARGUMENTS"):
        configure({"COLONY_TRACE_ARGUMENTS": "lots"})
