"""Cross-site requests and DNS rebinding against an open gateway on loopback, on every route.

A page on attacker.example that rebinds its name to 127.0.0.1 sends
``Host: attacker.example``; a page that posts cross-site sends its own Origin
and, to avoid a CORS preflight, a ``text/plain`` body. Each is refused before
the route runs; the same request addressed properly is served (the control).
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.services.gateway import StartGateway

CONSOLE = "https://console.example"
TOOL_CALL = {"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}
LISTING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ROUTES = ["/v1/tool_call", "/v1/catalog", "/mcp"]

Send = Callable[..., httpx.Response]


@pytest.fixture(scope="module")
def gateway(start_gateway: StartGateway) -> str:
    """An open gateway that also allows one operator-named origin."""
    return start_gateway(COLONY_GATEWAY_ALLOWED_ORIGINS=CONSOLE)


@pytest.fixture(scope="module")
def port(gateway: str) -> int:
    return int(gateway.rsplit(":", 1)[1])


def request(
    gateway: str, route: str, headers: dict[str, str] | None = None, *, body: bytes | None = None
) -> httpx.Response:
    """``route`` as a client would send it (POST with JSON, or GET), with ``headers`` laid over."""
    sent = {"accept": "application/json, text/event-stream", **(headers or {})}
    if route == "/v1/catalog":
        return httpx.get(f"{gateway}{route}", headers=sent, timeout=10)
    payload = (
        body if body is not None else httpx.Request("POST", "/", json=LISTING if route == "/mcp" else TOOL_CALL).content
    )
    sent.setdefault("content-type", "application/json")
    return httpx.post(f"{gateway}{route}", content=payload, headers=sent, timeout=10)


def refusal(response: httpx.Response, route: str) -> str:
    """The refusal's message: a JSON-RPC error on /mcp, the gateway's error body elsewhere."""
    body = response.json()
    if route == "/mcp":
        assert body["jsonrpc"] == "2.0" and "result" not in body
        return str(body["error"]["message"])
    assert body["ok"] is False and "result" not in body
    return str(body["error"]["message"])


@pytest.mark.parametrize("route", ROUTES)
def test_the_control_request_is_served(gateway: str, port: int, route: str) -> None:
    assert request(gateway, route).status_code == 200
    assert request(gateway, route, {"origin": f"http://127.0.0.1:{port}"}).status_code == 200
    assert (
        request(gateway, route, {"host": f"localhost:{port}", "origin": f"http://localhost:{port}"}).status_code == 200
    )
    assert request(gateway, route, {"origin": CONSOLE}).status_code == 200


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:{port}",
        "localhost:1",
        "127.0.0.1:{other}",
        "127.0.0.1.attacker.example:{port}",
    ],
)
def test_a_foreign_host_is_refused(gateway: str, port: int, route: str, host: str) -> None:
    host = host.format(port=port, other=port + 1)
    response = request(gateway, route, {"host": host})
    assert response.status_code == 421, response.text
    assert host in refusal(response, route) and "COLONY_GATEWAY_ALLOWED_HOSTS" in refusal(response, route)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "origin",
    [
        "http://attacker.example",
        "http://localhost:3000",  # any port on localhost used to pass
        "http://127.0.0.1:{other}",
        "https://127.0.0.1:{port}",  # the gateway's own host and port, another scheme
        "http://127.0.0.1:{port}.attacker.example",
        "http://console.example",  # the allowed origin's host, another scheme
        "https://console.example:8443",  # the allowed origin's host, another port
        "https://console.example.attacker.example",
        "null",  # a sandboxed frame or a file: page
    ],
)
def test_a_foreign_origin_is_refused(gateway: str, port: int, route: str, origin: str) -> None:
    origin = origin.format(port=port, other=port + 1)
    response = request(gateway, route, {"origin": origin})
    assert response.status_code == 403, response.text
    assert origin in refusal(response, route)


@pytest.mark.parametrize("route", ["/v1/tool_call", "/mcp"])
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""]
)
def test_a_post_without_json_is_refused_naming_the_type(gateway: str, route: str, content_type: str) -> None:
    response = request(gateway, route, {"content-type": content_type})
    assert response.status_code == 415, response.text
    assert "application/json" in refusal(response, route)
    assert request(gateway, route, {"content-type": "application/json; charset=utf-8"}).status_code == 200


def test_the_rebinding_attack_from_the_report_runs_nothing(gateway: str) -> None:
    """A text/plain POST naming shell_exec, addressed to attacker.example, as a rebound page sends it."""
    body = b'{"tool_name": "shell_exec", "tool_args": {"command": "touch /tmp/pwned"}}'
    response = request(gateway, "/v1/tool_call", {"host": "attacker.example", "content-type": "text/plain"}, body=body)
    assert response.status_code == 421 and response.json()["ok"] is False
    same_host = request(gateway, "/v1/tool_call", {"content-type": "text/plain"}, body=body)
    assert same_host.status_code == 415 and same_host.json()["ok"] is False
