"""One client, or one principal, cannot take every connection of a real ``colony gateway``.

The gateway holds at most 50 connections (``COLONY_GATEWAY_MAX_CONNECTIONS``), so each
client address may hold 5 (a tenth) and each principal 4 approval long polls. Clients
come from their own loopback addresses (127.0.0.2, 127.0.0.3...), the operator from
127.0.0.1. Heads may take a minute, so a trickling client holds its connections for the
whole test unless its share stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from colony.kernel import ColonyKernel, KernelSettings
from tests.security.conftest import CASE, TOKENS
from tests.services import free_port
from tests.services.gateway import start_gateway_process, stop_gateway_process

MAX_CONNECTIONS = 50
SHARE = MAX_CONNECTIONS // 10  # the default share of one client address
WAITS = 4  # the default long polls of one principal
DEADLINE = 30.0  # generous: the machine is shared
OPERATOR = {"authorization": "Bearer ops-token"}
AGENT = {"authorization": "Bearer agent-token"}


@dataclass
class Gateway:
    url: str
    port: int
    approval_id: str


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    home = tmp_path / "home"
    kernel = ColonyKernel(KernelSettings(home=home, database_url=None))
    kernel.set_trust("engineer-1", 0.6)
    held = kernel.propose_action(
        {
            "agent_id": "engineer-1",
            "action_type": "append_note",
            "target": "tool:append_note",
            "rationale": CASE["rationale"],
            "rollback_plan": CASE["rollback_plan"],
            "tool": "append_note",
            "require_approval": True,
        }
    )
    kernel.close()
    assert held.approval_id
    port = free_port()
    env = {
        "COLONY_HOME": str(home),
        "COLONY_GATEWAY_TOKENS_FILE": str(tokens),
        "COLONY_GATEWAY_MAX_CONNECTIONS": str(MAX_CONNECTIONS),
        "COLONY_GATEWAY_HEADER_TIMEOUT": "60",
    }
    process = start_gateway_process(env, port)
    yield Gateway(f"http://127.0.0.1:{port}", port, held.approval_id)
    stop_gateway_process(process)


def trickler(gateway: Gateway, address: str) -> socket.socket:
    """A connection from ``address`` that has sent part of a request head and sends no more."""
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=5, source_address=(address, 0))
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % gateway.port)
    return sock


def operator_answers(gateway: Gateway, count: int = 5) -> list[int]:
    with httpx.Client(headers=OPERATOR, timeout=DEADLINE) as client:
        return [client.get(f"{gateway.url}/v1/approvals").status_code for _ in range(count)]


def test_trickling_clients_keep_their_share_and_the_operator_is_served(gateway: Gateway) -> None:
    addresses = [f"127.0.0.{host}" for host in range(2, 6)]
    socks = [trickler(gateway, address) for address in addresses for _ in range(3 * SHARE)]  # 60: past the cap
    try:
        assert operator_answers(gateway) == [200] * 5
        # A connection past its address's share is answered 429 once its head is complete.
        sock = trickler(gateway, addresses[0])
        sock.settimeout(DEADLINE)
        sock.sendall(b"1\r\n\r\n")
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                answer += chunk
        sock.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429 "), answer
        assert b"\r\nretry-after: 1" in head and b"connection: close" in head
        assert f"holds {SHARE} connections" in json.loads(body)["error"]["message"]
    finally:
        for sock in socks:
            sock.close()
    # The share is given back when the connections close.
    deadline = time.monotonic() + DEADLINE
    transport = httpx.HTTPTransport(local_address=addresses[0])
    with httpx.Client(transport=transport, timeout=DEADLINE) as client:
        while (status := client.get(f"{gateway.url}/health").status_code) != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
    assert status == 200


async def test_one_principal_long_polling_from_many_addresses_keeps_its_share(gateway: Gateway) -> None:
    url = f"{gateway.url}/v1/approvals/{gateway.approval_id}"
    addresses = [f"127.0.0.{host}" for host in range(10, 22)]  # 12 x 5 = 60 polls, each address within its share

    async def poll(address: str) -> httpx.Response:
        transport = httpx.AsyncHTTPTransport(local_address=address)
        async with httpx.AsyncClient(transport=transport, headers=AGENT, timeout=60) as client:
            return await client.get(url, params={"wait": 30})

    polls: list[asyncio.Task[httpx.Response]] = []
    done: set[asyncio.Task[httpx.Response]] = set()
    pending: set[asyncio.Task[httpx.Response]] = set()
    try:
        for address in addresses:  # a wave per address, each answered before the next
            wave = [asyncio.create_task(poll(address)) for _ in range(SHARE)]
            polls += wave
            pending |= set(wave)
            deadline = time.monotonic() + DEADLINE
            while len(done) < len(polls) - WAITS and time.monotonic() < deadline:  # all but the principal's share
                more, pending = await asyncio.wait(pending, timeout=0.2)
                done |= more
            assert len(done) >= len(polls) - WAITS, f"{len(pending)} long polls still waiting from {address}"
        assert len(pending) == WAITS, f"{len(pending)} long polls still waiting"
        refused = [task.result() for task in done]
        assert {answer.status_code for answer in refused} == {429}
        assert all(answer.headers["retry-after"] == "1" for answer in refused)
        assert "already waits on 4 approval(s)" in refused[0].json()["error"]["message"]

        assert await asyncio.to_thread(operator_answers, gateway) == [200] * 5
        async with httpx.AsyncClient(headers=OPERATOR, timeout=DEADLINE) as client:
            decided = await client.post(f"{url}/approve", json={"note": "fine"})
        assert decided.status_code == 200
        waited = await asyncio.wait_for(asyncio.gather(*pending), timeout=DEADLINE)
        assert [answer.json()["approval"]["state"] for answer in waited] == ["approved"] * WAITS
    finally:
        for task in polls:
            task.cancel()
