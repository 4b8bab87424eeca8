"""Credentials that should stop working do, and a slow or flooded JWKS issuer cannot stall the gateway."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from colony.errors import AuthenticationError
from colony.surfaces.auth import JwtAuthenticator, JwtSettings, principal_of
from tests.services.gateway import StartGateway

AUDIENCE = "https://colony.example"
CONVERT = {"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}


def post(url: str, token: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/tool_call", json=CONVERT, headers={"authorization": f"Bearer {token}"}, timeout=10)


def test_a_token_removed_from_the_token_file_stops_working_without_a_restart(
    start_gateway: StartGateway, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    grants = {"keep": {"agent": "ops", "capabilities": ["*"]}, "leaver": {"agent": "leaver", "capabilities": ["*"]}}
    path.write_text(json.dumps(grants))
    url = start_gateway(COLONY_GATEWAY_TOKENS_FILE=str(path))
    assert post(url, "leaver").status_code == 200
    path.write_text(json.dumps({"keep": grants["keep"]}))
    refused = post(url, "leaver")
    assert refused.status_code == 401 and "not one this gateway knows" in refused.json()["error"]["message"]
    assert post(url, "keep").status_code == 200
    path.write_text("{not json")  # a broken file keeps no token alive, and says why
    broken = post(url, "keep")
    assert broken.status_code == 401 and "token file is unreadable or invalid" in broken.json()["error"]["message"]
    path.write_text(json.dumps({**grants, "newcomer": {"agent": "new", "capabilities": ["*"]}}))
    assert post(url, "newcomer").status_code == 200 and post(url, "keep").status_code == 200


class Issuer:
    """A JWKS endpoint that answers after ``delay`` seconds, counts its fetches and notes when each was answered."""

    def __init__(self, jwks: dict[str, Any]) -> None:
        self.jwks, self.delay, self.fetches = jwks, 0.0, 0
        self.answering: list[tuple[float, float]] = []  # (start, end) of each fetch's delay, monotonic
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                issuer.fetches += 1
                started = time.monotonic()
                time.sleep(issuer.delay)
                issuer.answering.append((started, time.monotonic()))
                body = json.dumps(issuer.jwks).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"


@pytest.fixture
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def issuer(key: rsa.RSAPrivateKey) -> Iterator[Issuer]:
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    served = Issuer({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]})
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()


def bearer(key: rsa.RSAPrivateKey, kid: str = "k1", aud: str = AUDIENCE) -> str:
    now = int(time.time())
    claims = {"sub": "engineer-1", "aud": aud, "exp": now + 300, "scope": "tool:unit_convert"}
    return "Bearer " + jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


async def test_fetching_the_jwks_for_an_unknown_key_does_not_stall_the_event_loop(
    issuer: Issuer, key: rsa.RSAPrivateKey
) -> None:
    issuer.delay = 1.5
    verifier = JwtAuthenticator(JwtSettings(audience=AUDIENCE, jwks_url=issuer.url))
    ticks: list[float] = []

    async def heartbeat() -> None:
        while True:
            ticks.append(time.monotonic())
            await anyio.sleep(0.05)

    async with anyio.create_task_group() as group:
        group.start_soon(heartbeat)
        await anyio.sleep(0.1)
        principals = []

        async def authenticate() -> None:
            principals.append(await principal_of(verifier, bearer(key)))

        async with anyio.create_task_group() as callers:
            for _ in range(20):
                callers.start_soon(authenticate)
        group.cancel_scope.cancel()
    assert [principal.agent_id for principal in principals] == ["engineer-1"] * 20
    assert issuer.fetches == 1, "concurrent requests for one unknown key share one fetch"
    [(started, ended)] = issuer.answering
    during = [tick for tick in ticks if started < tick < ended]
    assert len(during) >= 5, "the loop kept running during the fetch"  # a live loop ticks ~30 times, a stalled one 0


async def test_unknown_key_ids_cannot_make_the_gateway_hammer_the_issuer(
    issuer: Issuer, key: rsa.RSAPrivateKey
) -> None:
    verifier = JwtAuthenticator(JwtSettings(audience=AUDIENCE, jwks_url=issuer.url, refetch_seconds=60))
    assert (await principal_of(verifier, bearer(key))).agent_id == "engineer-1"
    for number in range(30):
        with pytest.raises(AuthenticationError, match="no key with kid"):
            await principal_of(verifier, bearer(key, kid=f"forged-{number}"))
    assert issuer.fetches == 1


async def test_a_jwks_fetch_that_does_not_answer_in_time_is_refused_promptly(
    issuer: Issuer, key: rsa.RSAPrivateKey
) -> None:
    issuer.delay = 5
    verifier = JwtAuthenticator(JwtSettings(audience=AUDIENCE, jwks_url=issuer.url, fetch_timeout_seconds=0.5))
    started = time.monotonic()
    with pytest.raises(AuthenticationError, match="could not be fetched"):
        await principal_of(verifier, bearer(key))
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("aud", [AUDIENCE, AUDIENCE + "/"])
async def test_the_audience_is_accepted_with_or_without_a_trailing_slash(
    issuer: Issuer, key: rsa.RSAPrivateKey, aud: str
) -> None:
    verifier = JwtAuthenticator(JwtSettings(audience=AUDIENCE + "/", jwks_url=issuer.url))
    assert (await principal_of(verifier, bearer(key, aud=aud))).agent_id == "engineer-1"
    with pytest.raises(AuthenticationError, match="Audience doesn't match"):
        await principal_of(verifier, bearer(key, aud="https://colony.example.evil"))


def test_jwt_mode_starts_without_authorization_servers_and_serves_the_audience_it_accepts(
    start_gateway: StartGateway, issuer: Issuer, key: rsa.RSAPrivateKey
) -> None:
    url = start_gateway(COLONY_GATEWAY_JWKS_URL=issuer.url, COLONY_GATEWAY_JWT_AUDIENCE=AUDIENCE + "/")
    metadata = httpx.get(f"{url}/.well-known/oauth-protected-resource", timeout=10).json()
    assert metadata["resource"] == AUDIENCE and "authorization_servers" not in metadata
    challenge = post(url, "x").headers["www-authenticate"]
    assert f'resource_metadata="{AUDIENCE}/.well-known/oauth-protected-resource"' in challenge
    token = bearer(key, aud=metadata["resource"]).removeprefix("Bearer ")
    assert post(url, token).json()["result"]["value"] == 1000.0
