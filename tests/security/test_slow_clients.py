"""Slow and oversized clients on raw loopback sockets: each is dropped in time while /health keeps answering.

The gateway runs as ``colony gateway`` with one-second head and body timeouts
and a 4 KiB head cap, so every wait below is short and bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.services import free_port
from tests.services.gateway import start_gateway_process, stop_gateway_process

TIMEOUT_SECONDS = 1
MAX_HEAD_BYTES = 4096
DROPPED_WITHIN = 10.0  # generous next to the one-second timeouts: the machine is shared
CONNECTIONS = 30


class Gateway:
    """A running gateway, its port, and what it has logged so far."""

    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = ""
        assert process.stderr is not None
        os.set_blocking(process.stderr.fileno(), False)

    def read_log(self) -> str:
        """Everything the gateway has written to stderr up to now."""
        assert self.process.stderr is not None
        for _ in range(1000):
            chunk = self.process.stderr.read(65536)
            if not chunk:
                break
            self.log += chunk.decode(errors="replace")
        return self.log

    def head(self, method: str, path: str, length: int | None = None) -> bytes:
        extra = f"Content-Type: application/json\r\nContent-Length: {length}\r\n" if length is not None else ""
        return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{extra}".encode()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    port = free_port()
    env = {
        "COLONY_HOME": str(tmp_path_factory.mktemp("slow-home")),
        "COLONY_GATEWAY_HEADER_TIMEOUT": str(TIMEOUT_SECONDS),
        "COLONY_GATEWAY_BODY_TIMEOUT": str(TIMEOUT_SECONDS),
        "COLONY_GATEWAY_MAX_HEADER_BYTES": str(MAX_HEAD_BYTES),
    }
    process = start_gateway_process(env, port)
    yield Gateway(process, port)
    stop_gateway_process(process)


def connect(gateway: Gateway, first: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
    if first:
        sock.sendall(first)
    sock.setblocking(False)
    return sock


def trickle(
    gateway: Gateway, sockets: list[socket.socket], drip: bytes
) -> tuple[dict[socket.socket, bytes], list[int]]:
    """Send ``drip`` on every open socket every 0.2 s until the gateway drops it (at most DROPPED_WITHIN).

    Returns what each socket received (those still open are left out) and the
    status of a /health request made on every round.
    """
    received: dict[socket.socket, bytes] = {}
    open_sockets = set(sockets)
    health: list[int] = []
    deadline = time.monotonic() + DROPPED_WITHIN
    while open_sockets and time.monotonic() < deadline:
        for sock in list(open_sockets):
            with contextlib.suppress(OSError):  # the gateway closed it; the read below sees that
                sock.send(drip)
        readable, _, _ = select.select(list(open_sockets), [], [], 0.2)
        for sock in readable:
            try:
                chunk = sock.recv(65536)
            except OSError:
                chunk = b""  # reset: the gateway closed with our drip unread
            received[sock] = received.get(sock, b"") + chunk
            if not chunk:
                open_sockets.discard(sock)
        health.append(httpx.get(f"{gateway.url}/health", timeout=5).status_code)
    for sock in sockets:
        sock.close()
    return {sock: data for sock, data in received.items() if sock not in open_sockets}, health


def read_until_closed(sock: socket.socket) -> bytes:
    """What the gateway sends before closing ``sock``; fails if it keeps it open past DROPPED_WITHIN."""
    sock.setblocking(True)
    sock.settimeout(DROPPED_WITHIN)
    data = b""
    try:
        for _ in range(1000):
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    except TimeoutError:
        pytest.fail(f"the gateway kept the connection open for {DROPPED_WITHIN:g} s; it sent {data!r}")
    finally:
        sock.close()
    pytest.fail("the gateway kept sending")


def read_response(sock: socket.socket) -> bytes:
    """One whole response (its head and Content-Length body) from ``sock``, leaving the connection open."""
    sock.setblocking(True)
    sock.settimeout(DROPPED_WITHIN)
    data = b""
    for _ in range(1000):
        head, found, body = data.partition(b"\r\n\r\n")
        if found:
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
            )
            if len(body) >= length:
                return data
        chunk = sock.recv(65536)
        assert chunk, f"the gateway closed the connection mid-response: {data!r}"
        data += chunk
    pytest.fail("no whole response")


def response_of(raw: bytes) -> tuple[int, dict[str, str], dict[str, object]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split(" ")[1]), headers, json.loads(body)


def test_slow_heads_and_slow_bodies_are_dropped_while_health_answers(gateway: Gateway) -> None:
    heads = [connect(gateway, gateway.head("POST", "/v1/tool_call")) for _ in range(CONNECTIONS)]
    bodies = [
        connect(gateway, gateway.head("POST", "/v1/tool_call", length=10_000) + b'\r\n{"tool_name": ')
        for _ in range(CONNECTIONS)
    ]
    dropped_heads, health = trickle(gateway, heads, b"X-Slow: 1\r\n")
    assert len(dropped_heads) == CONNECTIONS, f"{CONNECTIONS - len(dropped_heads)} slow heads were held"
    dropped_bodies, more_health = trickle(gateway, bodies, b"a")
    assert len(dropped_bodies) == CONNECTIONS, f"{CONNECTIONS - len(dropped_bodies)} slow bodies were held"
    assert set(health + more_health) == {200}
    answered = [data for data in {**dropped_heads, **dropped_bodies}.values() if data]
    assert all(data.startswith(b"HTTP/1.1 408 ") for data in answered), answered[:3]


def test_a_stalled_body_is_answered_408_and_closed(gateway: Gateway) -> None:
    sock = connect(gateway, gateway.head("POST", "/v1/tool_call", length=100) + b'\r\n{"tool_name": ')
    status, headers, body = response_of(read_until_closed(sock))
    assert (status, headers["connection"]) == (408, "close")
    assert body["ok"] is False and "did not arrive within 1 s" in str(body["error"])


def test_a_stalled_mcp_body_is_a_json_rpc_408(gateway: Gateway) -> None:
    sock = connect(gateway, gateway.head("POST", "/mcp", length=100) + b'\r\n{"jsonrpc": ')
    status, _, body = response_of(read_until_closed(sock))
    assert status == 408 and body["jsonrpc"] == "2.0" and "did not arrive" in str(body["error"])


def test_a_stalled_head_is_answered_408_and_closed(gateway: Gateway) -> None:
    sock = connect(gateway, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1")
    status, headers, body = response_of(read_until_closed(sock))
    assert (status, headers["connection"]) == (408, "close")
    assert "request head not complete within 1 s" in str(body["error"])


def test_a_silent_connection_is_closed(gateway: Gateway) -> None:
    assert read_until_closed(connect(gateway, b"")) == b""


def test_an_idle_keep_alive_connection_is_closed(gateway: Gateway) -> None:
    sock = connect(gateway, gateway.head("GET", "/health") + b"\r\n")
    status, _, body = response_of(read_response(sock))
    assert status == 200 and body["status"] == "ok"
    assert read_until_closed(sock) == b""


def test_an_oversized_head_is_answered_431_and_closed(gateway: Gateway) -> None:
    padding = b"".join(b"X-Pad-%d: %s\r\n" % (index, b"p" * 90) for index in range(60))  # ~6 KiB, unfinished
    sock = connect(gateway, gateway.head("GET", "/health") + padding)
    status, headers, body = response_of(read_until_closed(sock))
    assert (status, headers["connection"]) == (431, "close")
    assert f"over {MAX_HEAD_BYTES} bytes" in str(body["error"])


def test_a_large_head_within_the_cap_is_served(gateway: Gateway) -> None:
    padding = {f"x-pad-{index}": "p" * 90 for index in range(30)}  # ~3 KiB
    assert httpx.get(f"{gateway.url}/health", headers=padding, timeout=10).status_code == 200


def test_a_client_that_goes_away_mid_body_costs_one_log_line(gateway: Gateway) -> None:
    before = gateway.read_log()
    for path in ("/v1/tool_call", "/mcp"):
        sock = connect(gateway, gateway.head("POST", path, length=100) + b'\r\n{"a": ')
        time.sleep(0.2)  # let the body guard start waiting
        sock.close()
    deadline = time.monotonic() + DROPPED_WITHIN
    while gateway.read_log().count("went away") - before.count("went away") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    new = gateway.read_log()[len(before) :]
    lines = [line for line in new.splitlines() if line.strip()]
    assert [line for line in lines if "went away" in line] == lines, new
    assert len(lines) == 2 and "Traceback" not in new
    assert "POST /v1/tool_call (6 of 100 bytes received)" in lines[0]


def test_get_mcp_is_405_not_an_open_stream(gateway: Gateway) -> None:
    response = httpx.get(f"{gateway.url}/mcp", headers={"accept": "text/event-stream"}, timeout=5)
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert "stateless" in response.json()["error"]["message"]
    deleted = httpx.delete(f"{gateway.url}/mcp", timeout=5)
    assert deleted.status_code == 405


def test_a_request_head_and_body_in_good_time_are_served(gateway: Gateway) -> None:
    body = b'{"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}'
    sock = connect(gateway, gateway.head("POST", "/v1/tool_call", length=len(body)))
    for piece in (b"\r\n", body[:20], body[20:]):  # in pieces, each well within the timeouts
        time.sleep(0.1)
        sock.send(piece)
    status, _, answer = response_of(read_response(sock))
    sock.close()
    assert status == 200 and answer["result"] == {"value": 1000.0, "from_unit": "km", "to_unit": "m"}
