"""``UnifiedToolClient``: seed 004's examples in-process and through a real gateway."""

from __future__ import annotations

import pytest

from colony.client import UnifiedToolClient
from colony.errors import PeerError, SurfaceError, ToolInputError, UnknownToolError
from tests.seed004 import BAD_UNIT, EXAMPLES, SeedExample


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.id)
def test_seed_examples_locally(example: SeedExample) -> None:
    example.check(UnifiedToolClient().call_tool_local(example.tool, example.arguments))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.id)
def test_seed_examples_remotely(gateway_url: str, example: SeedExample) -> None:
    client = UnifiedToolClient()
    example.check(client.call_tool_remote(http_url=gateway_url, tool_name=example.tool, tool_args=example.arguments))


def test_bad_input_raises_value_error_locally_and_remotely(gateway_url: str) -> None:
    tool, args, message = BAD_UNIT
    client = UnifiedToolClient()
    with pytest.raises(ValueError, match=f"^{message}$"):
        client.call_tool_local(tool, args)
    with pytest.raises(ValueError, match=f"^{message}$") as caught:
        client.call_tool_remote(http_url=gateway_url, tool_name=tool, tool_args=args)
    assert isinstance(caught.value, ToolInputError) and caught.value.errors[0].field == "from_unit"


def test_unknown_tool_and_dead_gateway(gateway_url: str) -> None:
    client = UnifiedToolClient(timeout_seconds=2)
    with pytest.raises(UnknownToolError, match="no_such_tool"):
        client.call_tool_local("no_such_tool", {})
    with pytest.raises(UnknownToolError, match="no_such_tool"):
        client.call_tool_remote(http_url=gateway_url, tool_name="no_such_tool", tool_args={})
    with pytest.raises(PeerError, match="unreachable"):
        client.call_tool_remote(http_url="http://127.0.0.1:1", tool_name="unit_convert", tool_args={})
    with pytest.raises(ToolInputError, match="JSON object"):
        client.call_tool_local("unit_convert", [1])  # type: ignore[arg-type]


def test_the_seed_workflow_chain() -> None:
    client = UnifiedToolClient()
    redacted = client.call_tool_local(
        "pii_redact", {"text": "Contact john@example.com for info about the 10 mile race"}
    )
    summary = client.call_tool_local("doc_summarize", {"text": redacted["redacted_text"], "max_sentences": 1})
    conversion = client.call_tool_local("unit_convert", {"value": 10, "from_unit": "miles", "to_unit": "km"})
    assert summary["summary"] == "Contact [REDACTED] for info about the 10 mile race"
    assert conversion["value"] == 16.0934


def test_list_tools_as_the_seed_filters_them() -> None:
    tools = UnifiedToolClient().get_local_toolhost().list_tools()
    by_name = {tool["name"]: tool for tool in tools}
    assert by_name["unit_convert"]["version"] == "1.0.1"
    assert by_name["unit_convert"]["required_capability"] == "tool:unit_convert"
    deterministic = [tool["name"] for tool in tools if tool.get("deterministic", False)]
    offline = [tool["name"] for tool in tools if "no_network" in tool.get("policy_tags", [])]
    pii = [tool["name"] for tool in tools if "pii" in tool.get("policy_tags", [])]
    assert "unit_convert" in deterministic and "unit_convert" in offline and pii == ["pii_redact"]


async def test_sync_calls_inside_an_event_loop_point_to_the_async_ones() -> None:
    client = UnifiedToolClient()
    with pytest.raises(SurfaceError, match="acall_"):
        client.call_tool_local("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"})
    result = await client.acall_tool_local("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"})
    assert result["value"] == 1000.0
