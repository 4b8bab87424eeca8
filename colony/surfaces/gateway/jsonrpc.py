"""/mcp messages checked before the MCP transport: each malformed one gets the JSON-RPC error that names its fault.

- an ``MCP-Protocol-Version`` header this server does not speak: -32022, naming the header;
- a body that is not JSON, or nested too deeply to parse: -32700 (never a 500);
- a batch (a JSON array): -32600, except under protocol 2025-03-26, the one revision that
  had batches, where each message is answered in turn and the answers come back as an array;
  a batch holds at most ``MAX_BATCH`` messages, and once its answers pass
  ``MAX_BATCH_ANSWER_BYTES`` the messages left are each answered -32600 naming the cap (so a
  1 MB body of ``tools/list`` requests cannot be made into gigabytes of answers);
- a message that is no object, or a request without ``method``: -32600.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colony.surfaces.gateway.replies import send_body, send_json

__all__ = ["BATCH_VERSION", "MAX_BATCH", "MAX_BATCH_ANSWER_BYTES", "JsonRpcGuard"]

BATCH_VERSION = "2025-03-26"
#: The messages one batch may hold: clients batch a handful; each message is served in turn on the loop.
MAX_BATCH = 50
#: The answers of one batch, encoded: past this, the messages left are refused, not answered.
MAX_BATCH_ANSWER_BYTES = 8 * 1024 * 1024
_HEADER = "mcp-protocol-version"


class JsonRpcGuard:
    """Answer malformed /mcp messages with their JSON-RPC error; split a 2025-03-26 batch into single calls."""

    def __init__(
        self, app: ASGIApp, *, max_batch: int = MAX_BATCH, max_answer_bytes: int = MAX_BATCH_ANSWER_BYTES
    ) -> None:
        self.app = app
        self.max_batch = max_batch
        self.max_answer_bytes = max_answer_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        version = Headers(scope=scope).get(_HEADER)
        if version is not None and version not in KNOWN_PROTOCOL_VERSIONS:
            message = (
                f"the MCP-Protocol-Version header names {version!r}, a protocol version this server does not "
                f"speak; send one of {', '.join(KNOWN_PROTOCOL_VERSIONS)}"
            )
            data = {"supported": list(KNOWN_PROTOCOL_VERSIONS), "requested": version}
            await _refuse(send, UNSUPPORTED_PROTOCOL_VERSION, message, data=data)
            return
        raw = await _body(receive)
        try:
            document = json.loads(raw)
        except RecursionError:
            await _refuse(send, PARSE_ERROR, "Parse error: the JSON body is nested too deeply to parse")
            return
        except ValueError as error:
            await _refuse(send, PARSE_ERROR, f"Parse error: the body is not JSON: {error}")
            return
        if isinstance(document, list):
            if version != BATCH_VERSION:
                message = (
                    f"Invalid Request: JSON-RPC batches are not part of MCP protocol version {version or 'negotiated'}"
                    f" (only {BATCH_VERSION} had them); send one message per POST"
                )
                await _refuse(send, INVALID_REQUEST, message)
            elif not document:
                await _refuse(send, INVALID_REQUEST, "Invalid Request: the batch is empty")
            elif len(document) > self.max_batch:
                message = (
                    f"Invalid Request: the batch holds {len(document)} messages; the cap is {self.max_batch} "
                    "(send the rest in further batches, or one message per POST)"
                )
                await _refuse(send, INVALID_REQUEST, message, data={"messages": len(document), "cap": self.max_batch})
            else:
                await self._batch(scope, document, receive, send)
            return
        fault = _fault(document)
        if fault is not None:
            await _refuse(send, INVALID_REQUEST, fault, request_id=_id(document))
            return
        await self.app(scope, _replay(raw, receive), send)

    async def _batch(self, scope: Scope, messages: list[Any], receive: Receive, send: Send) -> None:
        """Each message of a batch answered in turn; the answers (none for notifications) as one array."""
        answers: list[Any] = []
        size = 0
        for message in messages:
            fault = _fault(message)
            if fault is None and size > self.max_answer_bytes:
                fault = (
                    f"Invalid Request: not served: this batch's answers passed {self.max_answer_bytes} bytes before "
                    "this message; send it again in another batch"
                )
            if fault is not None:
                answers.append(_error(INVALID_REQUEST, fault, _id(message)))
                continue
            raw = json.dumps(message).encode()
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            single = {**scope, "headers": [*headers, (b"content-length", str(len(raw)).encode())]}
            captured = _Captured()
            await self.app(single, _replay(raw, receive), captured)
            if captured.body.strip():
                size += len(captured.body)
                answers.append(json.loads(captured.body))
        if answers:
            await send_json(send, 200, answers)
        else:
            await send_body(send, 202, b"", json_body=False)


class _Captured:
    """An ASGI ``send`` that keeps the response body."""

    def __init__(self) -> None:
        self.body = b""

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.body":
            self.body += message.get("body", b"")


def _fault(message: Any) -> str | None:
    """What makes ``message`` no valid JSON-RPC message; None when it is one."""
    if not isinstance(message, dict):
        return "Invalid Request: a JSON-RPC message must be an object"
    if "method" not in message and "result" not in message and "error" not in message:
        return "Invalid Request: the message has no 'method' (a request or notification needs one)"
    if "method" in message and not isinstance(message["method"], str):
        return "Invalid Request: 'method' must be a string"
    return None


def _id(message: Any) -> Any:
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def _error(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def _refuse(send: Send, code: int, message: str, *, request_id: Any = None, data: Any = None) -> None:
    await send_json(send, 400, _error(code, message, request_id, data))


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(raw: bytes, rest: Receive) -> Receive:
    """``raw`` as the whole request body, then what the connection says next (its disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await rest()
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    return receive
