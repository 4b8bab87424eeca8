"""POST /v1/tool_call from the HotPath: the same answers as a route, every guard still in front of it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from colony.surfaces.gateway import GatewaySettings, create_app
from colony.surfaces.gateway.body import BodyGuardMiddleware
from colony.surfaces.gateway.hot_path import Answer, HotPath
from colony.surfaces.gateway.origins import OriginPolicy, TransportGuardMiddleware
from colony.surfaces.gateway.replies import encode_json

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


async def test_an_unexpected_error_is_answered_500_then_raised_for_the_log() -> None:
    async def broken(headers: Headers, body: bytes) -> Answer:
        raise RuntimeError("a bug")

    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        return JSONResponse({"ok": False, "error": {"type": "InternalError", "message": str(error)}}, status_code=500)

    async def never(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("the hot path's request reached the app")

    policy = OriginPolicy.for_gateway(GatewaySettings(port=8787))
    layer = HotPath(
        never,
        method="POST",
        path="/v1/tool_call",
        answer=broken,
        on_error=lambda request, error: None,
        on_unexpected=unexpected,
        transport=TransportGuardMiddleware(never, policy),
        body=BodyGuardMiddleware(never, max_bytes=1024, timeout_seconds=5),
    )
    for raising in (False, True):
        transport = httpx.ASGITransport(layer, raise_app_exceptions=raising)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787") as client:
            if raising:
                with pytest.raises(RuntimeError, match="a bug"):
                    await client.post("/v1/tool_call", json=CALL)
            else:
                response = await client.post("/v1/tool_call", json=CALL)
                assert response.status_code == 500 and response.json()["error"]["message"] == "a bug"


def test_every_layer_writes_json_the_same_way(client: TestClient) -> None:
    """The guards, /mcp's layers, the hot path and the app's routes: one encoding, one content type."""
    answers = [
        client.post("/v1/tool_call", json=CALL),  # the hot path
        client.get("/health"),  # a route
        client.post("/v1/tool_call", content=b"{}", headers={"content-type": "text/plain"}),  # the body guard
        client.post("/v1/tool_call", json=CALL, headers={"host": "attacker.example"}),  # the transport guard
        client.get("/mcp"),  # the stateless /mcp methods
        client.post("/mcp", content=b"{nope", headers={"content-type": "application/json"}),  # the JSON-RPC guard
    ]
    for answer in answers:
        compact = json.dumps(answer.json(), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
        assert answer.content == compact, (answer.request.url, answer.content)
        assert answer.headers["content-type"] == "application/json"
        assert answer.headers["content-length"] == str(len(answer.content))


@pytest.mark.parametrize(
    "content",
    [
        {"text": "plain", "name": "é ✓ \u2028", "value": 0.1, "big": 1e16, "none": None},
        [1, 2.5, None, True, {"nested": ["a", -0.0, 2**70]}],
        {"text": "NaN and Infinity are only words here"},
    ],
)
def test_answers_are_encoded_as_json_response_renders_them(content: object) -> None:
    assert encode_json(content) == JSONResponse(content).body


def test_a_small_float_reads_back_the_same() -> None:
    assert json.loads(encode_json({"value": 1e-7})) == json.loads(JSONResponse({"value": 1e-7}).body)


@pytest.mark.parametrize(
    ("content", "error"),
    [({"value": float("nan")}, ValueError), ([float("inf")], ValueError), ({"thing": object()}, TypeError)],
)
def test_what_json_response_refuses_is_refused(content: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        JSONResponse(content)
    with pytest.raises(error):
        encode_json(content)
