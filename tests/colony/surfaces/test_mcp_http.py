"""The official MCP client against the gateway's /mcp (streamable HTTP), served by uvicorn in its own process."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.colony.surfaces.seed001 import (
    KERNEL_TOOLS,
    call,
    exercise_bad_arguments,
    exercise_seed_examples,
    mcp_over_http,
)


async def test_seed_examples_over_streamable_http(gateway_url: str) -> None:
    async with Client(f"{gateway_url}/mcp") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert set(KERNEL_TOOLS) | {"unit_convert", "jsonschema_validate", "doc_summarize"} <= names
        await exercise_seed_examples(client)
        await exercise_bad_arguments(client)
        with pytest.raises(MCPError, match="unknown tool"):
            await client.call_tool("no_such_tool", {})


async def test_catalog_tools_over_streamable_http(gateway_url: str) -> None:
    async with mcp_over_http(gateway_url, **{"X-Colony-Agent": "http-agent"}) as client:
        answer, failed = await call(client, "unit_convert", {"value": 150, "from_unit": "pounds", "to_unit": "kg"})
        assert (answer, failed) == ({"value": 68.0388, "from_unit": "pounds", "to_unit": "kg"}, False)
        schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
        answer, failed = await call(client, "jsonschema_validate", {"schema": schema, "data": {"count": "x"}})
        assert (answer["valid"], failed) == (False, False)
        assert answer["errors"] == ["'x' is not of type 'integer'"]


def test_the_seed_raw_json_rpc_tools_list(gateway_url: str) -> None:
    response = httpx.post(
        f"{gateway_url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, timeout=10
    )
    assert response.status_code == 200
    tools = response.json()["result"]["tools"]
    assert {tool["name"] for tool in tools} >= {"colony_status", "unit_convert"}
    assert all(tool["description"] for tool in tools)


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1.evil.example:80"}, 403),
        ({"Host": "evil.example"}, 421),
        ({"Host": "evil.example:8787"}, 421),
    ],
)
def test_forged_origin_or_host_is_refused(gateway_url: str, headers: dict[str, str], status: int) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(f"{gateway_url}/mcp", json=body, headers=headers, timeout=10)
    assert response.status_code == status


def test_a_local_origin_is_accepted(gateway_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    port = gateway_url.rsplit(":", 1)[1]
    response = httpx.post(f"{gateway_url}/mcp", json=body, headers={"Origin": f"http://localhost:{port}"}, timeout=10)
    assert response.status_code == 200
