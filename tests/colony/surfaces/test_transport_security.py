"""/mcp's DNS-rebinding protection: this gateway's own names and origins, plus exactly what the operator allows."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from colony.surfaces.gateway import GatewaySettings, create_app

LISTING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("https://console.example", 200),
        ("http://localhost:8787", 200),
        ("http://localhost:3000", 403),
        ("http://console.example", 403),
        ("https://console.example:8443", 403),
        ("https://console.example.evil", 403),
        ("http://evil.example", 403),
    ],
)
def test_operator_allowed_origins(monkeypatch: pytest.MonkeyPatch, origin: str, status: int) -> None:
    monkeypatch.setenv("COLONY_GATEWAY_ALLOWED_ORIGINS", "https://console.example")
    app = create_app(GatewaySettings.from_env())
    with TestClient(app, base_url="http://127.0.0.1:8787") as client:
        response = client.post("/mcp", json=LISTING, headers={"Origin": origin})
    assert response.status_code == status


def test_operator_allowed_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_GATEWAY_ALLOWED_HOSTS", "colony.internal:8787")
    app = create_app(GatewaySettings.from_env())
    with TestClient(app, base_url="http://colony.internal:8787") as client:
        assert client.post("/mcp", json=LISTING).status_code == 200
        assert client.post("/mcp", json=LISTING, headers={"Host": "colony.evil:8787"}).status_code == 421


def test_forwarded_headers_are_believed_only_from_named_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    from colony.surfaces.gateway.protocol import server_options

    closed = server_options(GatewaySettings.from_env())
    assert (closed["proxy_headers"], closed["forwarded_allow_ips"], closed["server_header"]) == (False, None, False)
    monkeypatch.setenv("COLONY_GATEWAY_TRUSTED_PROXIES", "10.0.0.7, 10.0.0.8")
    behind = server_options(GatewaySettings.from_env())
    assert (behind["proxy_headers"], behind["forwarded_allow_ips"]) == (True, ["10.0.0.7", "10.0.0.8"])


def test_a_remembered_admission_never_admits_a_post_without_json() -> None:
    client = TestClient(create_app(GatewaySettings(port=8787)), base_url="http://127.0.0.1:8787")
    assert client.get("/v1/tool_call").status_code == 405  # past the guard: this Host, a GET, no Content-Type
    answer = client.post("/v1/tool_call", content=b"{}")  # no Content-Type at all, as the GET had none
    assert answer.status_code == 415
    for _ in range(2):  # the same POST, admitted once, is admitted again; a foreign Host still is not
        assert client.post("/v1/tool_call", json={"tool_name": "unit_convert", "tool_args": {}}).status_code != 415
    assert client.get("/health", headers={"host": "evil.example"}).status_code == 421
