"""Capability tokens at the gateway: bearer token -> granted capability tokens -> 401 / 403 / 200."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from colony.errors import AuthenticationError, CapabilityDeniedError, SurfaceError
from colony.runtime import LOCAL_OPERATOR
from colony.surfaces.auth import OpenAccess, TokenTable, parse_tokens
from colony.surfaces.gateway import GatewaySettings
from colony.surfaces.gateway.settings import is_loopback
from tests.colony.surfaces.seed001 import call, mcp_over_http
from tests.services.gateway import StartGateway

TOKENS = {
    "root-token": {"agent": "ops", "capabilities": ["*"], "operator": True},
    "convert-token": {"agent": "converter", "capabilities": ["tool:unit_convert"]},
}
CONVERT = {
    "target": {"kind": "local"},
    "tool_name": "unit_convert",
    "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"},
}
VALIDATE = {"target": {"kind": "local"}, "tool_name": "jsonschema_validate", "tool_args": {"schema": {}, "data": 1}}


@pytest.fixture(scope="module")
def secured(start_gateway: StartGateway, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    path.write_text(json.dumps(TOKENS))
    return start_gateway(COLONY_GATEWAY_TOKENS_FILE=str(path))


def post(url: str, body: dict[str, object], token: str | None = None, scheme: str = "Bearer") -> httpx.Response:
    headers = {"authorization": f"{scheme} {token}"} if token is not None else {}
    return httpx.post(f"{url}/v1/tool_call", json=body, headers=headers, timeout=10)


@pytest.mark.parametrize(
    ("token", "scheme", "status", "needle"),
    [
        (None, "Bearer", 401, "requires a bearer token"),
        ("not-a-token", "Bearer", 401, "not one this gateway knows"),
        ("root-token", "Basic", 401, "must be 'Bearer <token>'"),
    ],
)
def test_missing_or_wrong_token_is_401(secured: str, token: str | None, scheme: str, status: int, needle: str) -> None:
    response = post(secured, CONVERT, token, scheme)
    assert response.status_code == status
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["type"] == "AuthenticationError" and needle in response.json()["error"]["message"]


def test_token_without_the_capability_is_403_naming_it(secured: str) -> None:
    response = post(secured, VALIDATE, "convert-token")
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["type"] == "CapabilityDeniedError" and error["missing"] == ["tool:jsonschema_validate"]
    assert "tool:jsonschema_validate" in error["message"]


def test_granted_tokens_call_their_tools(secured: str) -> None:
    assert post(secured, CONVERT, "convert-token").json()["result"]["value"] == 1000.0
    assert post(secured, VALIDATE, "root-token").json()["result"]["valid"] is True


def test_catalog_and_mcp_need_a_token_but_health_does_not(secured: str) -> None:
    assert httpx.get(f"{secured}/health", timeout=10).status_code == 200
    assert httpx.get(f"{secured}/v1/catalog", timeout=10).status_code == 401
    catalog = httpx.get(f"{secured}/v1/catalog", headers={"authorization": "Bearer convert-token"}, timeout=10)
    assert catalog.status_code == 200
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    refused = httpx.post(f"{secured}/mcp", json=listing, timeout=10)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == -32021


async def test_mcp_tool_calls_respect_the_token(secured: str) -> None:
    async with mcp_over_http(secured, authorization="Bearer convert-token") as client:
        answer, failed = await call(client, "unit_convert", {"value": 2, "from_unit": "km", "to_unit": "m"})
        assert (answer["value"], failed) == (2000.0, False)
        answer, failed = await call(client, "jsonschema_validate", {"schema": {}, "data": 1})
        assert failed and answer["details"]["missing"] == ["tool:jsonschema_validate"]


def test_token_table_rules() -> None:
    table = TokenTable({"t": {"agent": "engineer-1", "capabilities": ["tool:a"]}})
    principal = table.authenticate("Bearer t")
    assert (principal.agent_id, principal.operator) == ("engineer-1", False)
    assert principal.allows("tool:a") and not table.authenticate("bearer  t ").allows("tool:b")
    with pytest.raises(AuthenticationError):
        table.authenticate("Bearer ")
    assert OpenAccess().authenticate(None) == LOCAL_OPERATOR and LOCAL_OPERATOR.allows("tool:anything")
    with pytest.raises(SurfaceError, match="empty"):
        TokenTable({" ": {"agent": "x"}})


def test_the_list_form_still_loads_as_an_anonymous_principal_with_a_warning() -> None:
    with pytest.warns(FutureWarning, match="binds no agent"):
        grants = parse_tokens('{"old": ["tool:unit_convert"]}', "COLONY_GATEWAY_TOKENS")
    principal = TokenTable(grants).authenticate("Bearer old")
    assert (principal.agent_id, principal.operator, principal.capabilities) == (
        "anonymous",
        False,
        frozenset({"tool:unit_convert"}),
    )
    with pytest.raises(SurfaceError, match="operator: Input should be a valid boolean"):
        parse_tokens('{"t": {"agent": "a", "operator": "yes please"}}', "tokens.json")


def test_binding_beyond_loopback_needs_tokens(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(SurfaceError, match=r"refusing to bind 0\.0\.0\.0"):
        GatewaySettings(host="0.0.0.0").check_safe()
    GatewaySettings(host="0.0.0.0", tokens={"t": {"agent": "ops", "capabilities": ["*"]}}).check_safe()
    GatewaySettings(host="::1").check_safe()
    assert is_loopback("localhost") and is_loopback("127.0.0.2") and not is_loopback("example.org")
    monkeypatch.setenv("COLONY_GATEWAY_TOKENS", "[1, 2]")
    with pytest.raises(SurfaceError, match="COLONY_GATEWAY_TOKENS: tokens must be a JSON object"):
        GatewaySettings.from_env()
    monkeypatch.delenv("COLONY_GATEWAY_TOKENS")
    monkeypatch.setenv("COLONY_GATEWAY_TOKENS_FILE", str(tmp_path / "missing.json"))
    with pytest.raises(SurfaceError, match="cannot read the gateway's token file"):
        GatewaySettings.from_env()
    monkeypatch.delenv("COLONY_GATEWAY_TOKENS_FILE")
    monkeypatch.setenv("COLONY_GATEWAY_PORT", "eighty")
    with pytest.raises(SurfaceError, match="gateway setting port"):
        GatewaySettings.from_env()


def test_capability_denied_names_every_missing_token() -> None:
    from colony.spec import ToolSpec

    spec = ToolSpec(name="two_keys", capabilities=("run",), required_capabilities=("tool:two_keys", "net:egress"))
    with pytest.raises(CapabilityDeniedError) as caught:
        principal = TokenTable({"t": {"agent": "a", "capabilities": ["tool:two_keys"]}}).authenticate("Bearer t")
        principal.require(spec.required_capabilities, "calling two_keys")
    assert caught.value.missing == ["net:egress"]
