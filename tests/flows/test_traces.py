"""A flow run's trace: the span carries the run's id, the run is labelled with the trace id, the call nests under it."""

from __future__ import annotations

import pytest
from prefect.client.orchestration import get_client

from flows._tracing import TRACE_LABEL
from flows.tool_call import ToolCall, tool_call
from tests.services.otlp import FakeOtlpReceiver, flush

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_a_flow_runs_span_and_the_run_point_at_each_other(traced_here: FakeOtlpReceiver) -> None:
    state = tool_call(
        ToolCall(tool="unit_convert", arguments={"value": 7, "from_unit": "miles", "to_unit": "km"}), return_state=True
    )
    assert state.is_completed()
    flush()
    run_id = str(state.state_details.flow_run_id)
    spans = traced_here.wait_for(
        lambda spans: (
            any(s.attributes.get("prefect.flow_run.id") == run_id for s in spans)
            and any(s.name == "execute_tool unit_convert" for s in spans)
        )
    )
    [run] = [s for s in spans if s.attributes.get("prefect.flow_run.id") == run_id]
    assert run.name == "flow tool-call" and run.attributes["colony.surface"] == "flow"
    [call] = [s for s in spans if s.name == "execute_tool unit_convert" and s.trace_id == run.trace_id]
    assert call.parent_id == run.span_id and call.attributes["colony.outcome"] == "executed"
    with get_client(sync_client=True) as client:
        labels = client.read_flow_run(state.state_details.flow_run_id).labels
    assert labels[TRACE_LABEL] == run.trace_id
