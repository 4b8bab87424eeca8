"""One broken catalog entry fails alone on every surface; the good tools keep serving.

The catalog holds ``unit_convert``, an entry naming a class its module lacks and one
whose module raises at import. A real gateway (``/v1/catalog``, ``/v1/tool_call``,
``/mcp`` through the official MCP client), ``colony mcp`` over stdio, the CLI and
``UnifiedToolClient`` (local and remote) all list and call ``unit_convert``, list the
broken entries as unavailable with the reason, and refuse a call of one saying why.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from colony.cli import app
from colony.errors import ToolUnavailableError
from colony.runtime import Catalog, Runtime
from colony.surfaces import UnifiedToolClient
from tests.colony.surfaces.broken_tools import MISSING_CLASS, RAISES_AT_IMPORT, REASONS, broken_repo
from tests.colony.surfaces.seed001 import call
from tests.colony.surfaces.test_mcp_stdio import stdio_server
from tests.services.gateway import StartGateway

CONVERT = {"value": 10, "from_unit": "km", "to_unit": "m"}


@pytest.fixture(scope="module")
def broken_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return broken_repo(tmp_path_factory.mktemp("broken-repo"))


@pytest.fixture(scope="module")
def broken_gateway(start_gateway: StartGateway, broken_root: Path) -> str:
    """An open gateway over the broken catalog: it starts, and serves what loads."""
    return start_gateway(COLONY_REPO_ROOT=str(broken_root))


def assert_unavailable_listed(records: list[dict[str, object]]) -> None:
    """The broken entries, each marked unavailable with the reason naming it and what failed."""
    by_name = {record["name"]: record for record in records}
    assert set(by_name) == set(REASONS)
    for name, reason in REASONS.items():
        assert by_name[name]["available"] is False
        assert name in str(by_name[name]["reason"]) and reason in str(by_name[name]["reason"])


def assert_names_the_failure(error: ToolUnavailableError, name: str) -> None:
    assert (error.tool, REASONS[name] in error.reason) == (name, True)
    assert f"tool {name!r} is unavailable" in str(error) and REASONS[name] in str(error)


def test_the_gateway_catalog_lists_what_loads_and_the_broken_entries_with_why(broken_gateway: str) -> None:
    for query in ("", "?enrich=true"):
        body = httpx.get(f"{broken_gateway}/v1/catalog{query}", timeout=10).json()
        assert [tool["name"] for tool in body["tools"]] == ["unit_convert"]
        assert_unavailable_listed(body["unavailable"])
    health = httpx.get(f"{broken_gateway}/health", timeout=10).json()
    assert (health["tools"], health["unavailable"]) == (1, 2)


@pytest.mark.parametrize("name", [MISSING_CLASS, RAISES_AT_IMPORT])
def test_the_gateway_calls_the_good_tool_and_refuses_a_broken_one_saying_why(broken_gateway: str, name: str) -> None:
    good = httpx.post(f"{broken_gateway}/v1/tool_call", json={"tool_name": "unit_convert", "tool_args": CONVERT})
    assert (good.status_code, good.json()["result"]["value"]) == (200, 10000.0)
    bad = httpx.post(f"{broken_gateway}/v1/tool_call", json={"tool_name": name, "tool_args": {}})
    assert bad.status_code == 503
    error = bad.json()["error"]
    assert (error["type"], error["tool"]) == ("ToolUnavailableError", name)
    assert REASONS[name] in error["reason"] and REASONS[name] in error["message"]
    anywhere = {"target": {"kind": "auto"}, "tool_name": name, "tool_args": {}}
    routed = httpx.post(f"{broken_gateway}/v1/tool_call", json=anywhere)  # no peers: the local refusal says why
    assert (routed.status_code, routed.json()["error"]) == (503, error)


async def test_mcp_over_http_serves_the_good_tool_and_names_why_a_broken_one_fails(broken_gateway: str) -> None:
    async with Client(f"{broken_gateway}/mcp") as client:
        await exercise_mcp(client)


async def test_colony_mcp_over_stdio_starts_and_isolates_the_broken_entries(
    colony_home: Path, broken_root: Path
) -> None:
    async with Client(stdio_server(colony_home, COLONY_REPO_ROOT=str(broken_root))) as client:
        await exercise_mcp(client)


async def exercise_mcp(client: Client) -> None:
    """tools/list omits the broken entries (MCP has no field for them); tools/call of one says why."""
    listed = {tool.name for tool in (await client.list_tools()).tools}
    assert "unit_convert" in listed and not listed & set(REASONS)
    answer, failed = await call(client, "unit_convert", CONVERT)
    assert (answer["value"], failed) == (10000.0, False)
    for name, reason in REASONS.items():
        with pytest.raises(MCPError) as raised:
            await client.call_tool(name, {})
        assert f"tool {name!r} is unavailable" in str(raised.value) and reason in str(raised.value)
        assert raised.value.error.data["type"] == "ToolUnavailableError"


@pytest.fixture
async def local_client(broken_root: Path) -> AsyncIterator[UnifiedToolClient]:
    client = UnifiedToolClient(runtime=Runtime(Catalog(broken_root / ".colony" / "tool-registry.json")))
    yield client
    await client.aclose()


async def test_unified_client_local_lists_and_calls_around_the_broken_entries(local_client: UnifiedToolClient) -> None:
    toolhost = local_client.get_local_toolhost()
    assert [tool["name"] for tool in toolhost.list_tools()] == ["unit_convert"]
    assert_unavailable_listed(toolhost.unavailable_tools())
    assert (await local_client.acall_tool_local("unit_convert", CONVERT))["value"] == 10000.0
    for name in REASONS:
        with pytest.raises(ToolUnavailableError) as raised:
            await local_client.acall_tool_local(name, {})
        assert_names_the_failure(raised.value, name)


async def test_unified_client_remote_gets_the_unavailable_error_back(broken_gateway: str) -> None:
    client = UnifiedToolClient()
    assert (await client.acall_tool_remote(http_url=broken_gateway, tool_name="unit_convert", tool_args=CONVERT))[
        "value"
    ] == 10000.0
    for name in REASONS:
        with pytest.raises(ToolUnavailableError) as raised:
            await client.acall_tool_remote(http_url=broken_gateway, tool_name=name, tool_args={})
        assert_names_the_failure(raised.value, name)


def test_the_cli_lists_marks_calls_and_checks_around_the_broken_entries(
    broken_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(broken_root))
    runner = CliRunner()
    listed = runner.invoke(app, ["tools", "list", "--json"])
    assert listed.exit_code == 0
    entries = {entry["name"]: entry for entry in json.loads(listed.stdout)}
    assert (entries["unit_convert"]["available"], entries["unit_convert"]["reason"]) == (True, None)
    assert_unavailable_listed([entry for name, entry in entries.items() if name != "unit_convert"])
    table = runner.invoke(app, ["tools", "list"])
    assert table.exit_code == 0
    rows = {line.split()[1]: line for line in table.stdout.splitlines() if line.startswith("│")}
    assert "unavailable:" not in rows["unit_convert"]
    assert all("unavailable:" in rows[name] and reason in rows[name] for name, reason in REASONS.items())

    good = runner.invoke(app, ["tools", "call", "unit_convert", json.dumps(CONVERT)])
    assert good.exit_code == 0 and json.loads(good.stdout)["value"] == 10000.0
    for name, reason in REASONS.items():
        bad = runner.invoke(app, ["tools", "call", name, "{}"])
        assert bad.exit_code == 1
        assert f"tool {name!r} is unavailable" in bad.stderr and reason in bad.stderr

    check = runner.invoke(app, ["tools", "check"])
    assert check.exit_code == 1
    problems = [line for line in check.stderr.splitlines() if line.startswith("✗")]
    assert len(problems) == 2
    assert all(any(name in line and reason in line for line in problems) for name, reason in REASONS.items())


def test_the_cli_refuses_to_start_an_agent_naming_a_broken_entry(
    broken_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(broken_root))
    spec = tmp_path / "converter.yaml"
    spec.write_text(f"name: converter\ncapabilities: [unit_convert, {MISSING_CLASS}]\n")
    shown = CliRunner().invoke(app, ["agent", "show", str(spec)])
    assert shown.exit_code == 1
    assert f"agent 'converter' cannot start: tool '{MISSING_CLASS}' is unavailable" in shown.stderr
    assert REASONS[MISSING_CLASS] in shown.stderr


def test_a_gateway_routes_a_tool_broken_here_to_a_peer_that_serves_it(
    start_gateway: StartGateway, gateway_url: str, tmp_path: Path
) -> None:
    root = broken_repo(tmp_path / "repo")
    registry = root / ".colony" / "tool-registry.json"
    document = json.loads(registry.read_text())
    broken_summarize = {"name": "doc_summarize", "capability": "summarize_text", "capability_fqn": "tools.gone.X"}
    registry.write_text(json.dumps({**document, "tools": [*document["tools"], broken_summarize]}))
    url = start_gateway(COLONY_REPO_ROOT=str(root), COLONY_GATEWAY_PEERS=gateway_url)
    auto = {"kind": "auto"}
    summary = {"text": "One. Two.", "max_sentences": 1}
    routed = httpx.post(
        f"{url}/v1/tool_call",
        json={"target": auto, "tool_name": "doc_summarize", "tool_args": summary},
        timeout=60,  # the peer's first call imports the tool: seconds on a loaded machine
    )
    assert routed.status_code == 200, routed.json()
    assert routed.json()["node"] != httpx.get(f"{url}/health").json()["node"]
    here = httpx.post(f"{url}/v1/tool_call", json={"tool_name": "doc_summarize", "tool_args": summary}, timeout=60)
    assert (here.status_code, here.json()["error"]["tool"]) == (503, "doc_summarize")  # asked to run it here
    nowhere = httpx.post(
        f"{url}/v1/tool_call", json={"target": auto, "tool_name": MISSING_CLASS, "tool_args": {}}, timeout=60
    )
    assert nowhere.status_code == 503
    message = nowhere.json()["error"]["message"]
    assert f"no healthy peer serves '{MISSING_CLASS}'" in message and "(does not have it)" in message
    assert f"tool '{MISSING_CLASS}' is unavailable" in message and REASONS[MISSING_CLASS] in message
