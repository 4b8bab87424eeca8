"""Per-caller rate and concurrency limits at the gateway: 429 with Retry-After on /v1/tool_call and /mcp.

The gateway runs as ``colony gateway`` with two bearer tokens (two callers) and
limits set through COLONY_GATEWAY_RATE_LIMITS: unit_convert refills so slowly
that nothing refills during the test, async_sleeper runs one call at a time.
"""

from __future__ import annotations

import json
import math
import threading
import time

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from colony.errors import RateLimitedError
from colony.surfaces.client import UnifiedToolClient
from colony.surfaces.gateway import GatewaySettings
from tests.colony.surfaces.seed001 import mcp_over_http
from tests.services.gateway import StartGateway

LIMITS = {
    "tools": {
        "unit_convert": {"rate": 0.01, "burst": 3},  # a token per 100 s: none comes back during the test
        "async_sleeper": {"concurrency": 1},
    }
}
CONVERT = {"value": 1, "from_unit": "km", "to_unit": "m"}
WAITED = 40  # a token comes back 100 s after the burst, less the time the test has taken so far
TOKENS = {"alpha-token": "alpha", "alpha-laptop-token": "alpha", "beta-token": "beta", "gamma-token": "gamma"}


@pytest.fixture(scope="module")
def gateway(start_gateway: StartGateway, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("limits-repo")
    entries = [
        {"name": "unit_convert", "capability": "convert_units", "capability_fqn": "tools.unit_convert.UnitConvert"},
        {
            "name": "async_sleeper",
            "capability": "sleep",
            "capability_fqn": "tests.colony.surfaces.sample_tools.AsyncSleeper",
        },
    ]
    (root / ".colony").mkdir()
    (root / ".colony" / "tool-registry.json").write_text(json.dumps({"version": 1, "tools": entries}))
    return start_gateway(
        COLONY_REPO_ROOT=str(root),
        COLONY_GATEWAY_TOKENS=json.dumps(
            {token: {"agent": agent, "capabilities": ["*"]} for token, agent in TOKENS.items()}
        ),
        COLONY_GATEWAY_RATE_LIMITS=json.dumps(LIMITS),
    )


def seconds(error: dict[str, float]) -> str:
    """The Retry-After an error with this ``retry_after_seconds`` must carry: whole seconds, rounded up."""
    return str(math.ceil(error["retry_after_seconds"]))


def tool_call(gateway: str, token: str, tool: str, args: dict[str, object]) -> httpx.Response:
    body = {"tool_name": tool, "tool_args": args}
    return httpx.post(f"{gateway}/v1/tool_call", json=body, headers={"authorization": f"Bearer {token}"}, timeout=30)


def mcp_call(gateway: str, token: str, tool: str, args: dict[str, object], request_id: int = 7) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": args}}
    headers = {"authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}
    return httpx.post(f"{gateway}/mcp", json=body, headers=headers, timeout=30)


async def test_over_the_rate_is_429_with_retry_after_on_every_surface(gateway: str) -> None:
    for _ in range(3):  # the burst
        assert tool_call(gateway, "alpha-token", "unit_convert", CONVERT).status_code == 200

    refused = tool_call(gateway, "alpha-token", "unit_convert", CONVERT)
    assert refused.status_code == 429 and refused.headers["retry-after"] == seconds(refused.json()["error"])
    error = refused.json()["error"]
    assert error["type"] == "RateLimitedError" and WAITED < error["retry_after_seconds"] <= 100
    assert "unit_convert" in error["message"] and "alpha-token" not in error["message"]

    raw = mcp_call(gateway, "alpha-token", "unit_convert", CONVERT, request_id=41)
    assert raw.status_code == 429 and raw.headers["retry-after"] == seconds(raw.json()["error"]["data"])
    assert raw.json()["id"] == 41 and raw.json()["error"]["code"] == -32029
    assert WAITED < raw.json()["error"]["data"]["retry_after_seconds"] <= 100

    async with mcp_over_http(gateway, Authorization="Bearer alpha-token") as client:
        with pytest.raises(MCPError) as official:
            await client.call_tool("unit_convert", CONVERT)
        assert official.value.error.code == -32029
        answer = await client.call_tool("async_sleeper", {"seconds": 0})  # another tool: its own bucket
        assert answer.is_error is False

    with pytest.raises(RateLimitedError) as rebuilt:
        await UnifiedToolClient(token="alpha-token").acall_tool_remote(
            http_url=gateway, tool_name="unit_convert", tool_args=CONVERT
        )
    assert WAITED < rebuilt.value.retry_after_seconds <= 100 and rebuilt.value.retryable


def test_each_principal_has_its_own_buckets(gateway: str) -> None:
    for _ in range(3):
        assert tool_call(gateway, "beta-token", "unit_convert", CONVERT).status_code == 200
    assert tool_call(gateway, "beta-token", "unit_convert", CONVERT).status_code == 429
    assert mcp_call(gateway, "gamma-token", "unit_convert", CONVERT).status_code == 200


def test_a_principal_s_tokens_share_its_buckets(gateway: str) -> None:
    """alpha spent its burst with one token (above): another token of the same agent finds it spent."""
    for _ in range(3):
        if tool_call(gateway, "alpha-token", "unit_convert", CONVERT).status_code == 429:
            break
    refused = tool_call(gateway, "alpha-laptop-token", "unit_convert", CONVERT)
    assert refused.status_code == 429 and "'alpha'" in refused.json()["error"]["message"]


def test_the_concurrency_cap_spans_both_surfaces(gateway: str) -> None:
    """While one /mcp call of async_sleeper runs, the same caller's next one is refused on either surface."""
    holder: list[httpx.Response] = []
    deadline = time.monotonic() + 60  # a loaded machine may take seconds to open the MCP session

    def hold() -> None:
        """Call until admitted: a probe below may hold the slot for a moment when the long call arrives."""
        while time.monotonic() < deadline:
            answer = mcp_call(gateway, "gamma-token", "async_sleeper", {"seconds": 10})
            if answer.status_code != 429:
                holder.append(answer)
                return

    running = threading.Thread(target=hold)
    running.start()
    refused: httpx.Response | None = None
    while running.is_alive() and time.monotonic() < deadline:  # until the long call holds its slot (10 s)
        attempt = tool_call(gateway, "gamma-token", "async_sleeper", {"seconds": 0})
        if attempt.status_code == 429:
            refused = attempt
            break
        threading.Event().wait(0.02)
    assert refused is not None, "a second call ran while the first held the only slot"
    assert refused.headers["retry-after"] == "1" and "running" in refused.json()["error"]["message"]
    assert mcp_call(gateway, "gamma-token", "async_sleeper", {"seconds": 0}).status_code == 429
    assert tool_call(gateway, "beta-token", "async_sleeper", {"seconds": 0}).status_code == 200  # another caller
    running.join(timeout=30)
    assert holder and holder[0].status_code == 200 and holder[0].json()["result"]["isError"] is False
    assert tool_call(gateway, "gamma-token", "async_sleeper", {"seconds": 0}).status_code == 200  # the slot is free


def test_rate_limit_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_GATEWAY_RATE_LIMITS", json.dumps({"tools": {"shell_exec": {"rate": 2, "burst": 4}}}))
    limits = GatewaySettings.from_env().rate_limits
    assert (limits.for_tool("shell_exec").rate, limits.for_tool("shell_exec").concurrency) == (2, 16)
    monkeypatch.setenv("COLONY_GATEWAY_RATE_LIMITS", "{nope")
    with pytest.raises(Exception, match="COLONY_GATEWAY_RATE_LIMITS: not valid JSON"):
        GatewaySettings.from_env()
    monkeypatch.setenv("COLONY_GATEWAY_RATE_LIMITS", json.dumps({"tools": {"shell_exec": {"rate": -1}}}))
    with pytest.raises(Exception, match=r"rate_limits\.tools\.shell_exec\.rate"):
        GatewaySettings.from_env()
