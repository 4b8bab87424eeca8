"""A fake OpenAI-compatible model server that speaks only chat completions, over real HTTP.

Like most local inference servers it serves ``POST /v1/chat/completions`` and nothing else
(``/v1/responses`` is 404). ``garbage`` makes it answer 200 with a body that is no JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.services import free_port
from tests.services.hpc import serve

REPLY = "hello from the fake model"


class FakeChatModelServer:
    """An ASGI app answering chat completions with one fixed text reply."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.requests: list[str] = []
        self.garbage = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        while (await receive()).get("more_body"):
            pass
        self.requests.append(f"{scope['method']} {scope['path']}")
        status, body = self._answer(scope["method"], scope["path"])
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": body})

    def _answer(self, method: str, path: str) -> tuple[int, bytes]:
        if (method, path) != ("POST", "/v1/chat/completions"):
            return 404, json.dumps({"error": {"message": f"no route {path}"}}).encode()
        if self.garbage:
            return 200, b"<html>not a model</html>"
        completion = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "local-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, json.dumps(completion).encode()


@pytest.fixture
def fake_chat_model() -> Iterator[FakeChatModelServer]:
    """A fake chat-completions-only model server on a free loopback port, stopped after the test."""
    port = free_port()
    server = FakeChatModelServer(f"http://127.0.0.1:{port}")
    stop: Callable[[], None] = serve(server, port)
    yield server
    stop()
