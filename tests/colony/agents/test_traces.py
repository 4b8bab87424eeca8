"""An agent run's trace: pydantic-ai's own spans, with Colony's call spans nested under its tool calls."""

from __future__ import annotations

from typing import Any

from colony.agents import run
from tests.colony.agents.harness import Script
from tests.services.otlp import FakeOtlpReceiver, flush


async def test_colony_spans_nest_under_the_agents_tool_call_spans(
    make_agent: Any, traced_here: FakeOtlpReceiver
) -> None:
    script = Script([[("convert_units", {"value": 12, "from_unit": "miles", "to_unit": "km"})], "Converted."])
    result = await run(make_agent(), "Convert the survey's length", model=script.model)
    assert result.output == "Converted."
    flush()
    spans = traced_here.wait_for(lambda spans: any(s.name == "execute_tool unit_convert" for s in spans))
    [call] = [s for s in spans if s.name == "execute_tool unit_convert"]  # the catalog tool behind the menu entry
    trace = {s.span_id: s for s in spans if s.trace_id == call.trace_id}
    ancestry = []
    parent = trace.get(call.parent_id)
    while parent is not None:
        ancestry.append(parent)
        parent = trace.get(parent.parent_id)
    names = [span.name for span in ancestry]
    assert names == ["agent clerk-1 calls convert_units", "execute_tool convert_units", "invoke_agent clerk-1"]
    assert ancestry[1].attributes["gen_ai.tool.name"] == "convert_units"  # pydantic-ai's span of the tool call
    assert call.attributes["colony.agent"] == "clerk-1" and call.attributes["colony.outcome"] == "executed"
    assert call.attributes["colony.action"] == "convert_units"
    assert {"colony.authorize", "colony.execute"} <= {s.name for s in trace.values() if s.parent_id == call.span_id}
