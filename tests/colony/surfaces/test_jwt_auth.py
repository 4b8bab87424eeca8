"""OAuth 2.1 bearer JWTs against a JWKS: the agent from ``sub``, capability tokens from scopes, nothing forgeable."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from colony.errors import AuthenticationError, SurfaceError
from colony.surfaces.auth import JwtAuthenticator, JwtSettings
from tests.colony.surfaces.seed001 import mcp_over_http
from tests.services.gateway import StartGateway

AUDIENCE = "https://colony.example/mcp"
ISSUER = "https://auth.example"


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def jwks(key: rsa.RSAPrivateKey) -> dict[str, Any]:
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}


def hs256(claims: dict[str, Any], secret: bytes) -> str:
    """A token MACed with ``secret`` by hand (PyJWT itself refuses a public key as an HMAC secret)."""
    encode = lambda data: base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()  # noqa: E731
    signing_input = f"{encode({'alg': 'HS256', 'typ': 'JWT', 'kid': 'k1'})}.{encode(claims)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def token(key: rsa.RSAPrivateKey, **claims: Any) -> str:
    now = int(time.time())
    body = {"sub": "engineer-1", "aud": AUDIENCE, "iss": ISSUER, "exp": now + 300, "iat": now, **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture(scope="module")
def verifier(jwks: dict[str, Any]) -> JwtAuthenticator:
    return JwtAuthenticator(JwtSettings(audience=AUDIENCE, jwks=jwks, issuer=ISSUER))


def test_sub_names_the_agent_and_scopes_grant_tokens(verifier: JwtAuthenticator, key: rsa.RSAPrivateKey) -> None:
    principal = verifier.authenticate("Bearer " + token(key, scope="tool:unit_convert kernel:read"))
    assert (principal.agent_id, principal.operator) == ("engineer-1", False)
    assert principal.capabilities == {"tool:unit_convert", "kernel:read"}
    operator = verifier.authenticate("Bearer " + token(key, sub="ops", scp=["tool:*", "colony:operator"]))
    assert operator.operator and operator.capabilities == {"tool:*"}


@pytest.mark.parametrize(
    ("claims", "needle"),
    [
        ({"aud": "https://other.example/mcp"}, "(?i)audience"),
        ({"iss": "https://evil.example"}, "issuer"),
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"sub": None}, "sub"),
    ],
)
def test_a_token_for_another_audience_issuer_or_time_is_refused(
    verifier: JwtAuthenticator, key: rsa.RSAPrivateKey, claims: dict[str, Any], needle: str
) -> None:
    with pytest.raises(AuthenticationError, match=needle):
        verifier.authenticate("Bearer " + token(key, **claims))


def test_forged_tokens_are_refused(verifier: JwtAuthenticator, key: rsa.RSAPrivateKey) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(AuthenticationError, match="not accepted"):
        verifier.authenticate("Bearer " + token(other))  # signed with a key the JWKS does not hold
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    claims = {"sub": "ops", "aud": AUDIENCE, "iss": ISSUER, "exp": int(time.time()) + 300, "scope": "colony:operator"}
    confused = hs256(claims, public_pem)
    with pytest.raises(AuthenticationError):
        verifier.authenticate("Bearer " + confused)  # the public key used as an HMAC secret
    unsigned = jwt.encode(claims, None, algorithm="none")
    with pytest.raises(AuthenticationError):
        verifier.authenticate("Bearer " + unsigned)


def test_symmetric_algorithms_cannot_be_configured(jwks: dict[str, Any]) -> None:
    with pytest.raises(SurfaceError, match="only asymmetric"):
        JwtAuthenticator(JwtSettings(audience=AUDIENCE, jwks=jwks, algorithms=("HS256",)))


@pytest.fixture(scope="module")
def jwt_gateway(start_gateway: StartGateway, jwks: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    path.write_text(json.dumps(jwks))
    return start_gateway(
        COLONY_GATEWAY_JWKS_FILE=str(path),
        COLONY_GATEWAY_JWT_AUDIENCE=AUDIENCE,
        COLONY_GATEWAY_JWT_ISSUER=ISSUER,
        COLONY_GATEWAY_AUTHORIZATION_SERVERS=ISSUER,
    )


def test_the_gateway_serves_its_resource_metadata_and_challenges_with_it(jwt_gateway: str) -> None:
    metadata = httpx.get(f"{jwt_gateway}/.well-known/oauth-protected-resource/mcp", timeout=10).json()
    assert metadata["resource"] == AUDIENCE and metadata["authorization_servers"] == [ISSUER]
    refused = httpx.post(f"{jwt_gateway}/v1/tool_call", json={"tool_name": "unit_convert"}, timeout=10)
    assert refused.status_code == 401
    assert (
        'resource_metadata="https://colony.example/.well-known/oauth-protected-resource/mcp"'
        in (refused.headers["www-authenticate"])
    )


async def test_a_jwt_principal_calls_and_lists_only_what_its_scopes_grant(
    jwt_gateway: str, key: rsa.RSAPrivateKey
) -> None:
    bearer = {"authorization": "Bearer " + token(key, scope="tool:unit_convert")}
    body = {"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}
    assert httpx.post(f"{jwt_gateway}/v1/tool_call", json=body, headers=bearer, timeout=10).json()["result"]["value"]
    denied = httpx.post(
        f"{jwt_gateway}/v1/tool_call", json={**body, "tool_name": "pii_redact"}, headers=bearer, timeout=10
    )
    assert denied.status_code == 403
    spoof = httpx.post(
        f"{jwt_gateway}/v1/tool_call", json=body, headers={**bearer, "x-colony-agent": "ops"}, timeout=10
    )
    assert spoof.status_code == 403 and spoof.json()["error"]["type"] == "IdentityError"
    async with mcp_over_http(jwt_gateway, **bearer) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == {"unit_convert"}


def test_jwt_and_static_tokens_are_exclusive(tmp_path: Path) -> None:
    from colony.surfaces.gateway import GatewaySettings

    settings = GatewaySettings(jwks_file=str(tmp_path / "x"), jwt_audience=AUDIENCE, tokens={"t": {"agent": "a"}})
    with pytest.raises(SurfaceError, match="not both"):
        settings.authenticator()


def test_authorization_servers_must_be_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    from colony.surfaces.gateway import GatewaySettings

    monkeypatch.setenv("COLONY_GATEWAY_AUTHORIZATION_SERVERS", "auth.example")
    with pytest.raises(
        SurfaceError, match=r"authorization_servers.*'auth\.example' is not an authorization server URL"
    ):
        GatewaySettings.from_env()
