"""The HTTP gateway in uvicorn, in its own process: seed 004's calls, the catalog, caps and routing."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.colony.surfaces.conftest import UNREACHABLE_PEER
from tests.seed004 import BAD_UNIT, EXAMPLES, SeedExample
from tests.services.gateway import GATEWAY_MAX_ARGUMENT_BYTES, GATEWAY_MAX_BODY_BYTES


def tool_call(base: str, tool: str, args: object, kind: str = "local", **target: object) -> httpx.Response:
    body = {"target": {"kind": kind, **target}, "tool_name": tool, "tool_args": args}
    return httpx.post(f"{base}/v1/tool_call", json=body, timeout=30)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.id)
def test_seed_examples_through_the_gateway(gateway_url: str, example: SeedExample) -> None:
    response = tool_call(gateway_url, example.tool, example.arguments)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ok"] is True and body["node"]
    example.check(body["result"])


def test_seed_curl_example_answers_exactly(gateway_url: str) -> None:
    response = tool_call(gateway_url, "unit_convert", {"value": 10, "from_unit": "miles", "to_unit": "km"})
    body = response.json()
    assert {key: body[key] for key in ("ok", "result")} == {
        "ok": True,
        "result": {"value": 16.0934, "from_unit": "miles", "to_unit": "km"},
    }


def test_bad_input_is_400_naming_the_field(gateway_url: str) -> None:
    tool, args, message = BAD_UNIT
    response = tool_call(gateway_url, tool, args)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (response.json()["ok"], error["type"], error["message"]) == (False, "ToolInputError", message)
    assert error["errors"][0]["field"] == "from_unit"


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"target": {"kind": "local"}, "tool_name": "no_such_tool", "tool_args": {}}, 404, "no_such_tool"),
        ({"target": {"kind": "local"}, "tool_name": "unit_convert", "tool_args": {"value": 1}}, 400, "from_unit"),
        ({"target": {"kind": "local"}, "tool_name": "unit_convert", "tool_args": [1, 2]}, 422, "tool_args"),
        ({"target": {"kind": "nowhere"}, "tool_name": "unit_convert", "tool_args": {}}, 422, "target.kind"),
        ({"tool_args": {}}, 422, "tool_name"),
        ({"target": {"kind": "remote"}, "tool_name": "unit_convert", "tool_args": {}}, 400, "target.url"),
        (
            {"target": {"kind": "remote", "url": "http://10.9.9.9:1"}, "tool_name": "unit_convert", "tool_args": {}},
            400,
            "not a configured peer",
        ),
        ({"target": {"kind": "auto"}, "tool_name": "pdf_render", "tool_args": {}}, 404, "no healthy node"),
    ],
)
def test_malformed_calls_are_refused_clearly(
    gateway_url: str, body: dict[str, object], status: int, needle: str
) -> None:
    response = httpx.post(f"{gateway_url}/v1/tool_call", json=body, timeout=10)
    assert response.status_code == status, response.text
    answer = response.json()
    assert answer["ok"] is False and needle in answer["error"]["message"]


def test_a_flood_of_wrong_fields_names_twenty_and_counts_the_rest(gateway_url: str) -> None:
    unknown = {f"k{index}": 1 for index in range(1000)}  # about 11 KB: within the arguments cap
    response = tool_call(gateway_url, "unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m", **unknown})
    error = response.json()["error"]
    assert response.status_code == 400 and [problem["field"] for problem in error["errors"]] == [
        f"k{index}" for index in range(20)
    ]
    assert error["message"].endswith("k19: unexpected argument; and 980 more"), error["message"]
    body = {"tool_name": "unit_convert", "tool_args": {}, **{f"extra{index}": 1 for index in range(30)}}
    response = httpx.post(f"{gateway_url}/v1/tool_call", json=body, timeout=10)
    error = response.json()["error"]
    assert response.status_code == 422 and len(error["errors"]) == 20
    assert error["message"].endswith("extra19: unexpected argument; and 10 more"), error["message"]


def test_a_body_that_is_not_json_is_422(gateway_url: str) -> None:
    response = httpx.post(
        f"{gateway_url}/v1/tool_call", content=b"{nope", headers={"content-type": "application/json"}, timeout=10
    )
    assert response.status_code == 422 and response.json()["ok"] is False


STREAMED_CHUNKS = [b'{"tool_name": "doc_summarize", "tool_args": {"text": "', b"z" * GATEWAY_MAX_BODY_BYTES, b'"}}']


def test_oversized_body_and_arguments_are_413(gateway_url: str) -> None:
    response = tool_call(gateway_url, "doc_summarize", {"text": "x" * GATEWAY_MAX_ARGUMENT_BYTES})
    assert response.status_code == 413 and str(GATEWAY_MAX_ARGUMENT_BYTES) in response.json()["error"]["message"]
    response = tool_call(gateway_url, "doc_summarize", {"text": "y" * GATEWAY_MAX_BODY_BYTES})
    assert response.status_code == 413 and response.json()["error"]["type"] == "PayloadTooLargeError"
    streamed = httpx.post(
        f"{gateway_url}/v1/tool_call",
        content=iter(
            [b'{"tool_name": "doc_summarize", "tool_args": {"text": "', b"z" * GATEWAY_MAX_BODY_BYTES, b'"}}']
        ),
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert streamed.status_code == 413
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"padding": "p" * GATEWAY_MAX_BODY_BYTES}}
    assert httpx.post(f"{gateway_url}/mcp", json=listing, timeout=10).status_code == 413
    assert tool_call(gateway_url, "unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}).status_code == 200


def test_catalog_lists_seed_tool_schemas(gateway_url: str) -> None:
    body = httpx.get(f"{gateway_url}/v1/catalog", timeout=10).json()
    tools = {tool["name"]: tool for tool in body["tools"]}
    convert = tools["unit_convert"]
    assert convert["tool_id"] == "tool:unit_convert" and convert["version"] == "1.0.1"
    assert convert["required_capabilities"] == ["tool:unit_convert"]
    assert convert["required_capability"] == "tool:unit_convert"
    assert convert["policy_tags"] == ["pure", "deterministic", "no_network"] and convert["deterministic"] is True
    assert convert["input_schema"]["additionalProperties"] is False
    assert "card" not in convert


def test_catalog_filters_and_enrichment(gateway_url: str) -> None:
    def names(**params: object) -> set[str]:
        response = httpx.get(f"{gateway_url}/v1/catalog", params=params, timeout=10)
        return {tool["name"] for tool in response.json()["tools"]}

    assert "unit_convert" in names(policy_tag="no_network")
    assert names(policy_tag="no_such_tag") == set()
    assert names(policy_tag=["pure", "deterministic"]) >= {"unit_convert"}
    assert "unit_convert" not in names(deterministic="false")
    enriched = httpx.get(f"{gateway_url}/v1/catalog", params={"enrich": "true"}, timeout=10).json()
    convert = next(tool for tool in enriched["tools"] if tool["name"] == "unit_convert")
    assert convert["node"] == enriched["node"]
    assert convert["card"].startswith("Tool unit_convert v1.0.1")
    assert len(convert["definition_sha256"]) == 64
    assert convert["mcp"]["annotations"]["read_only_hint"] is True


def test_health_and_openapi(gateway_url: str) -> None:
    health = httpx.get(f"{gateway_url}/health", timeout=10).json()
    assert health["status"] == "ok" and health["tools"] >= 3
    schema = httpx.get(f"{gateway_url}/openapi.json", timeout=10).json()
    assert {"/v1/catalog", "/v1/tool_call", "/health"} <= set(schema["paths"])
    assert httpx.get(f"{gateway_url}/docs", timeout=10).status_code == 200


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_api_pages_load_every_asset_from_the_gateway_itself(gateway_url: str, page: str) -> None:
    """The pages work without internet: every script, style sheet and icon they name is served here."""
    html = httpx.get(f"{gateway_url}{page}", timeout=10).text
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|(?:url): *["']([^"']+)["']""", html)
    assets = [first or second for first, second in urls]
    assert any(asset.endswith(".js") for asset in assets), html
    assert [asset for asset in assets if "//" in asset] == []
    for asset in assets:
        assert httpx.get(f"{gateway_url}{asset}", timeout=10).status_code == 200, asset


def test_remote_and_auto_route_to_a_peer(governed_gateway: tuple[str, Path], gateway_url: str) -> None:
    front, _ = governed_gateway
    peer_node = gateway_url.removeprefix("http://")
    text = {"text": "One sentence. Another one.", "max_sentences": 1}

    remote = tool_call(
        front, "unit_convert", {"value": 10, "from_unit": "miles", "to_unit": "km"}, "remote", url=gateway_url
    )
    assert remote.status_code == 200 and remote.json()["result"]["value"] == 16.0934
    assert remote.json()["node"] == peer_node

    auto = tool_call(front, "doc_summarize", text, kind="auto")
    assert auto.status_code == 200 and auto.json()["node"] == peer_node
    assert auto.json()["result"]["summary_sentences"] == 1
    assert tool_call(front, "doc_summarize", text).status_code == 404
    here = tool_call(front, "unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}, kind="auto")
    assert here.status_code == 200 and here.json()["node"] == front.removeprefix("http://")

    bad = tool_call(front, *BAD_UNIT[:2], kind="remote", url=gateway_url)
    assert bad.status_code == 400 and bad.json()["error"]["message"] == BAD_UNIT[2]

    missing = tool_call(front, "pdf_render", {}, kind="auto")
    assert missing.status_code == 404
    message = missing.json()["error"]["message"]
    assert f"{UNREACHABLE_PEER} (" in message and f"{gateway_url} (does not have it)" in message
