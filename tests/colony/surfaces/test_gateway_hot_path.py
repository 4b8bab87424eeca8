"""POST /v1/tool_call from the HotPath: the same answers as a route, every guard still in front of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from colony.surfaces.gateway import GatewaySettings, create_app

CALL = {
    "target": {"kind": "local"},
    "tool_name": "unit_convert",
    "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"},
}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(GatewaySettings(port=8787)), base_url="http://127.0.0.1:8787") as client:
        yield client


def test_a_call_is_answered(client: TestClient) -> None:
    response = client.post("/v1/tool_call", json=CALL)
    assert response.status_code == 200 and response.json()["result"]["value"] == 1000


def test_another_method_on_the_path_is_405_naming_post(client: TestClient) -> None:
    response = client.get("/v1/tool_call")
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert response.json() == {"ok": False, "error": {"type": "HTTPError", "message": "Method Not Allowed"}}


def test_errors_are_rendered_by_the_apps_handlers(client: TestClient) -> None:
    unknown = client.post("/v1/tool_call", json={**CALL, "tool_name": "nope"})
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "UnknownToolError"
    malformed = client.post("/v1/tool_call", json={"tool_args": {}})
    assert malformed.status_code == 422 and "tool_name" in malformed.json()["error"]["message"]


def test_the_guards_run_before_it(client: TestClient) -> None:
    as_text = client.post("/v1/tool_call", content=b"{}", headers={"content-type": "text/plain"})
    assert as_text.status_code == 415
    rebound = client.post("/v1/tool_call", json=CALL, headers={"host": "attacker.example"})
    assert rebound.status_code == 421


def test_other_routes_still_reach_the_app(client: TestClient) -> None:
    assert client.get("/health").status_code == 200
    assert "/v1/tool_call" in client.get("/openapi.json").json()["paths"]
