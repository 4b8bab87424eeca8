"""``colony mcp`` follows the registry file: list_changed arrives, new tools appear, removed ones are refused.

The official MCP client, over stdio, in both protocol eras: a 2026-07-28 client
listens (``subscriptions/listen``), a handshake-era client is sent
``notifications/tools/list_changed``. Over HTTP, a running gateway's /v1/catalog,
its stateless /mcp and its routing follow the file.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged

from tests.colony.surfaces.sample_tools import sample_repo
from tests.colony.surfaces.test_mcp_stdio import stdio_server
from tests.services.gateway import StartGateway

DOC_SUMMARIZE = {
    "name": "doc_summarize",
    "capability": "summarize_text",
    "capability_fqn": "tools.doc_summarize.DocSummarize",
}


def registry(root: Path) -> Path:
    return root / ".colony" / "tool-registry.json"


def add_tool(root: Path, entry: dict[str, str]) -> None:
    document = json.loads(registry(root).read_text())
    document["tools"].append(entry)
    registry(root).write_text(json.dumps(document))


def remove_tool(root: Path, name: str) -> None:
    document = json.loads(registry(root).read_text())
    document["tools"] = [tool for tool in document["tools"] if tool["name"] != name]
    registry(root).write_text(json.dumps(document))


async def names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.slow
async def test_a_listening_client_hears_of_added_and_removed_tools(colony_home: Path, tmp_path: Path) -> None:
    root = sample_repo(tmp_path / "repo")
    async with Client(stdio_server(colony_home, COLONY_REPO_ROOT=str(root))) as client:
        assert client.server_capabilities.tools is not None and client.server_capabilities.tools.list_changed
        before = await names(client)
        assert "unit_convert" in before and "doc_summarize" not in before
        async with client.listen(tools_list_changed=True) as subscription:
            add_tool(root, DOC_SUMMARIZE)
            with anyio.fail_after(20):
                event = await anext(subscription)
            assert isinstance(event, ToolsListChanged)
            assert "doc_summarize" in await names(client)
            result = await client.call_tool("doc_summarize", {"text": "One. Two.", "max_sentences": 1})
            assert not result.is_error
            remove_tool(root, "doc_summarize")
            with anyio.fail_after(20):
                assert isinstance(await anext(subscription), ToolsListChanged)
        assert await names(client) == before
        with pytest.raises(MCPError, match="unknown tool 'doc_summarize'"):
            await client.call_tool("doc_summarize", {"text": "One. Two."})


@pytest.mark.slow
async def test_a_handshake_session_is_sent_tools_list_changed(colony_home: Path, tmp_path: Path) -> None:
    root = sample_repo(tmp_path / "repo")
    changes = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changes.set()

    server = stdio_server(colony_home, COLONY_REPO_ROOT=str(root))
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        assert client.server_capabilities.tools is not None and client.server_capabilities.tools.list_changed
        assert "doc_summarize" not in await names(client)
        add_tool(root, DOC_SUMMARIZE)
        with anyio.fail_after(20):
            await changes.wait()
        assert "doc_summarize" in await names(client)


def wait_for(check: Any, what: str) -> None:
    """Poll ``check`` until it holds (the gateway re-reads its registry at most once a second)."""
    deadline = time.monotonic() + 20
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"the gateway never showed {what}")
        time.sleep(0.2)


async def test_the_gateway_lists_what_the_registry_holds_now(start_gateway: StartGateway, tmp_path: Path) -> None:
    root = sample_repo(tmp_path / "repo")
    url = start_gateway(COLONY_REPO_ROOT=str(root))

    def catalog() -> set[str]:
        return {tool["name"] for tool in httpx.get(f"{url}/v1/catalog", timeout=10).json()["tools"]}

    assert catalog() == {"append_note", "unit_convert"}
    async with Client(f"{url}/mcp") as client:
        assert "doc_summarize" not in await names(client)
        add_tool(root, DOC_SUMMARIZE)
        wait_for(lambda: "doc_summarize" in catalog(), "the added tool in /v1/catalog")
        assert "doc_summarize" in await names(client)  # the stateless /mcp lists per request
        remove_tool(root, "unit_convert")
        wait_for(lambda: "unit_convert" not in catalog(), "the removed tool gone from /v1/catalog")
        assert "unit_convert" not in await names(client)
        with pytest.raises(MCPError, match="unknown tool 'unit_convert'"):
            await client.call_tool("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"})
    call = {"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}
    assert httpx.post(f"{url}/v1/tool_call", json=call, timeout=10).status_code == 404
