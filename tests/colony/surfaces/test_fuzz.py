"""Property-based fuzzing: the gateway from its own OpenAPI schema, and MCP tool arguments.

Whatever arrives, the gateway answers below 500 and the MCP session keeps serving.
Example counts stay small so the suite stays fast.
"""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from schemathesis import GenerationMode

from colony.runtime import Runtime
from colony.surfaces.mcp.server import build_mcp_server


def test_the_gateway_never_answers_500(gateway_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{gateway_url}/openapi.json")
    operations = {result.ok().path: result.ok() for result in schema.get_all_operations()}
    assert set(operations) >= {"/v1/tool_call", "/v1/catalog", "/health"}
    for path, mode in itertools.product(operations, GenerationMode):
        if path not in ("/health", "/metrics") or mode is GenerationMode.POSITIVE:  # they take nothing to get wrong
            fuzz(gateway_url, operations[path], mode)


def fuzz(gateway_url: str, operation: Any, mode: GenerationMode) -> None:
    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=operation.as_strategy(mode))
    def answers_below_500(case: Any) -> None:
        response = case.call(base_url=gateway_url, timeout=30)
        assert response.status_code < 500, (case.method, case.path, case.body, response.text)
        if operation.path == "/v1/tool_call" and response.status_code != 405:
            assert response.json()["ok"] is (response.status_code == 200)

    answers_below_500()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3),
    max_leaves=8,
)
TOOLS = [
    "colony_propose_action",
    "colony_record_outcome",
    "colony_agent_profile",
    "colony_pheromone_query",
    "colony_falsify_plan",
    "colony_status",
    "unit_convert",
    "jsonschema_validate",
    "doc_summarize",
    "no_such_tool",
]
FIELDS = ["agent_id", "action_type", "target", "rationale", "rollback_plan", "evidence", "value", "from_unit",
          "to_unit", "schema", "data", "text", "max_sentences", "location", "signal_type", "plan_json",
          "tests_passed", "human_feedback", "actual_outcome"]  # fmt: skip
ARGUMENTS = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), JSON, max_size=6)


@pytest.fixture(scope="module")
def mcp_server() -> Server[Any]:
    """One in-process server (and so one kernel) for every generated session."""
    return build_mcp_server(Runtime())


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(calls=st.lists(st.tuples(st.sampled_from(TOOLS), ARGUMENTS), min_size=1, max_size=4))
def test_mcp_arguments_never_crash_the_session(
    mcp_server: Server[Any], calls: list[tuple[str, dict[str, Any]]]
) -> None:
    async def session() -> None:
        async with Client(mcp_server) as client:
            for name, arguments in calls:
                try:
                    result = await client.call_tool(name, arguments)
                except MCPError as error:
                    assert name == "no_such_tool" and "unknown tool" in error.message
                    continue
                assert result.content, (name, arguments)
            alive = await client.call_tool("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"})
            assert alive.structured_content == {"value": 1000.0, "from_unit": "km", "to_unit": "m"}

    anyio.run(session)
