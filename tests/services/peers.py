"""A peer gateway that misbehaves on request: garbage, wrong shapes, huge or slow answers, over real HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.services import free_port
from tests.services.hpc import serve


@dataclass
class Answer:
    """What the peer sends for one path: a status, a body, and how slowly."""

    body: bytes
    status: int = 200
    delay_seconds: float = 0.0
    repeat: int = 1


class MisbehavingPeerDouble:
    """An ASGI app answering each path as the test configured (404 JSON for anything else)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.answers: dict[str, Answer] = {}
        self.requests: list[str] = []

    def answer(self, path: str, body: Any, *, status: int = 200, delay_seconds: float = 0.0, repeat: int = 1) -> None:
        """Answer ``path`` with ``body`` (bytes as they are, anything else as JSON), ``repeat`` times over."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.answers[path] = Answer(raw, status, delay_seconds, repeat)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        self.requests.append(f"{scope['method']} {scope['path']}?{scope['query_string'].decode()}")
        answer = self.answers.get(scope["path"], Answer(b'{"ok": false, "error": {"type": "X"}}', 404))
        await asyncio.sleep(answer.delay_seconds)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        for _ in range(answer.repeat):
            await send({"type": "http.response.body", "body": answer.body, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


StartMisbehavingPeer = Callable[[], MisbehavingPeerDouble]


@pytest.fixture
def start_misbehaving_peer() -> Iterator[StartMisbehavingPeer]:
    """A factory of misbehaving peers, each on a free loopback port, all stopped after the test."""
    stops: list[Callable[[], None]] = []

    def start() -> MisbehavingPeerDouble:
        port = free_port()
        peer = MisbehavingPeerDouble(f"http://127.0.0.1:{port}")
        stops.append(serve(peer, port))
        return peer

    yield start
    for stop in stops:
        stop()
