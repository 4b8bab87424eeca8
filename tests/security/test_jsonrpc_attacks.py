"""Malformed JSON-RPC on /mcp gets the JSON-RPC error naming its fault, never a 500 or a reset connection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from starlette.types import Receive, Scope, Send

from colony.surfaces.gateway.jsonrpc import MAX_BATCH, JsonRpcGuard
from tests.colony.surfaces.seed001 import mcp_over_http

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def post(url: str, body: str | bytes, version: str = "2025-06-18", token: str = "agent-token") -> httpx.Response:
    headers = {**HEADERS, "mcp-protocol-version": version, "authorization": f"Bearer {token}"}
    return httpx.post(f"{url}/mcp", content=body, headers=headers, timeout=30)


def error_of(response: httpx.Response) -> dict[str, Any]:
    answer = response.json()
    assert answer["jsonrpc"] == "2.0", answer
    error: dict[str, Any] = answer["error"]
    return error


def test_a_tools_call_nested_5000_deep_is_a_parse_error_on_a_live_connection(secured: tuple[str, Path]) -> None:
    url, _ = secured
    deep = "[" * 5000 + "]" * 5000
    body = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"unit_convert","arguments":{"value":%s}}}'
    with httpx.Client(headers={**HEADERS, "authorization": "Bearer agent-token"}, timeout=30) as client:
        refused = client.post(f"{url}/mcp", content=body % deep)
        assert refused.status_code == 400
        error = error_of(refused)
        assert error["code"] == -32700 and "nested too deeply" in error["message"]
        assert client.post(f"{url}/mcp", json=LIST).status_code == 200  # the same connection still serves
    via_http = httpx.post(
        f"{url}/v1/tool_call",
        content=f'{{"tool_name":"unit_convert","tool_args":{{"value":{deep}}}}}',
        headers={"authorization": "Bearer agent-token", "content-type": "application/json"},
        timeout=30,
    )
    assert via_http.status_code in (400, 422) and via_http.json()["ok"] is False


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"jsonrpc": "2.0", "id": 3}, "no 'method'"),
        ({"jsonrpc": "2.0", "id": 3, "method": 5}, "'method' must be a string"),
        ([1, 2], "a JSON-RPC message must be an object"),
    ],
)
def test_a_message_without_a_method_is_an_invalid_request(secured: tuple[str, Path], body: object, needle: str) -> None:
    url, _ = secured
    refused = post(url, json.dumps(body), version="2025-03-26" if isinstance(body, list) else "2025-06-18")
    if isinstance(body, list):  # a batch under 2025-03-26: each bad member answered in the array
        answers = refused.json()
        assert [answer["error"]["code"] for answer in answers] == [-32600, -32600]
        assert needle in answers[0]["error"]["message"]
        return
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["code"] == -32600 and needle in error["message"] and "pydantic" not in error["message"]
    assert refused.json()["id"] == 3


def test_a_batch_is_refused_unless_2025_03_26_was_negotiated(secured: tuple[str, Path]) -> None:
    url, _ = secured
    batch = [LIST, {**LIST, "id": 2}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    refused = post(url, json.dumps(batch), version="2025-06-18")
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["code"] == -32600 and "batches" in error["message"] and "2025-03-26" in error["message"]
    answered = post(url, json.dumps(batch), version="2025-03-26")
    assert answered.status_code == 200, answered.text
    answers = answered.json()
    assert [answer["id"] for answer in answers] == [1, 2]  # the notification gets no answer
    assert all(answer["result"]["tools"] for answer in answers)
    empty = post(url, "[]", version="2025-03-26")
    assert empty.status_code == 400 and error_of(empty)["code"] == -32600


def test_a_batch_over_the_cap_is_refused_whole(secured: tuple[str, Path]) -> None:
    # Answered, 19,000 tools/list requests fitting the 1 MB body cap would be gigabytes of answers.
    url, _ = secured
    flood = [{**LIST, "id": number} for number in range(MAX_BATCH + 1)]
    refused = post(url, json.dumps(flood), version="2025-03-26")
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["code"] == -32600 and f"the cap is {MAX_BATCH}" in error["message"]
    assert error["data"] == {"messages": MAX_BATCH + 1, "cap": MAX_BATCH}
    pings = [{"jsonrpc": "2.0", "id": number, "method": "ping"} for number in range(MAX_BATCH)]
    answered = post(url, json.dumps(pings), version="2025-03-26")
    assert [answer["id"] for answer in answered.json()] == list(range(MAX_BATCH))


async def test_a_batch_stops_serving_once_its_answers_pass_their_cap() -> None:
    served: list[int] = []

    async def kilobyte_answers(scope: Scope, receive: Receive, send: Send) -> None:
        request = json.loads((await receive())["body"])
        served.append(request["id"])
        body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"padding": "x" * 1000}}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    guard = JsonRpcGuard(kilobyte_answers, max_answer_bytes=2500)
    batch = [{"jsonrpc": "2.0", "id": number, "method": "tools/list"} for number in range(5)]
    headers = {**HEADERS, "mcp-protocol-version": "2025-03-26"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guard), base_url="http://gateway") as client:
        answers = (await client.post("/mcp", json=batch, headers=headers)).json()
    assert served == [0, 1, 2]  # the third answer passed 2,500 bytes: the last two were never served
    assert [answer["id"] for answer in answers] == [0, 1, 2, 3, 4]
    assert all("result" in answer for answer in answers[:3])
    assert [answer["error"]["code"] for answer in answers[3:]] == [-32600, -32600]
    assert "passed 2500 bytes" in answers[3]["error"]["message"]


def test_a_bad_protocol_version_header_is_named_as_the_header(secured: tuple[str, Path]) -> None:
    url, _ = secured
    refused = post(url, json.dumps(LIST), version="1999-01-01")
    assert refused.status_code == 400
    error = error_of(refused)
    assert "MCP-Protocol-Version header" in error["message"] and "1999-01-01" in error["message"]
    assert "envelope" not in error["message"] and "2025-06-18" in error["data"]["supported"]


@pytest.mark.parametrize(
    ("token", "seen", "unseen"),
    [
        ("convert-token", {"unit_convert"}, {"append_note", "colony_propose_action"}),
        ("recorder-token", {"colony_record_outcome", "colony_agent_profile"}, {"unit_convert", "append_note"}),
    ],
)
async def test_an_unknown_tool_names_only_the_tools_the_caller_may_see(
    secured: tuple[str, Path], token: str, seen: set[str], unseen: set[str]
) -> None:
    url, _ = secured
    async with mcp_over_http(url, authorization=f"Bearer {token}") as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        with pytest.raises(MCPError, match="unknown tool 'no_such_tool'") as raised:
            await client.call_tool("no_such_tool", {})
    message = str(raised.value)
    named = set(message.split("may call: ")[1].rstrip(")").split(", "))
    assert named == listed and seen <= named and not unseen & named
