"""The one way the gateway's hand-written ASGI layers write an answer: JSON as a JSONResponse renders it.

The guards that answer before the app runs (Host/Origin, body, JSON-RPC, methods,
authentication on /mcp) and the hot path all write through ``send_json``, so every
answer has the same encoding (compact UTF-8, no NaN) and the same headers, whichever
layer wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pydantic_core
from starlette.types import Send

__all__ = ["Headers", "encode_json", "refusal_body", "send_body", "send_json"]

_INVALID_REQUEST = -32600

Headers = Mapping[str, str] | Iterable[tuple[bytes, bytes]]
"""Extra response headers: names to values, or raw ASGI pairs."""


def refusal_body(message: str, *, jsonrpc: bool, error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The gateway's error body, or a JSON-RPC error (for /mcp), saying ``message``."""
    if jsonrpc:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": _INVALID_REQUEST, "message": message}}
    return {"ok": False, "error": error or {"type": "HTTPError", "message": message}}


def encode_json(content: Any) -> bytes:
    """``content`` as ``JSONResponse.render`` writes it (raises ValueError for NaN or infinity).

    pydantic-core's encoder writes the same compact UTF-8 several times faster than the
    standard library (a small float's exponent as ``1e-7`` where ``json`` writes ``1e-07``;
    dates and UUIDs as pydantic writes them, where ``json`` fails). It
    writes NaN and infinity as bare words, so an answer that may hold one (those words
    anywhere in it, or a type pydantic cannot encode) is encoded again by ``json``, which
    refuses them as ``JSONResponse`` does.
    """
    try:
        encoded = pydantic_core.to_json(content, inf_nan_mode="constants")
    except pydantic_core.PydanticSerializationError:
        encoded = b"NaN"  # an unknown type: json names it
    if b"NaN" in encoded or b"Infinity" in encoded:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    return encoded


async def send_json(send: Send, status: int, content: Any, *, headers: Headers = (), close: bool = False) -> None:
    """Answer ``status`` with ``content`` as JSON; ``close`` ends the connection after it (its request is unread)."""
    await send_body(send, status, encode_json(content), headers=headers, close=close)


async def send_body(
    send: Send, status: int, payload: bytes, *, headers: Headers = (), close: bool = False, json_body: bool = True
) -> None:
    """Answer ``status`` with ``payload`` (JSON unless ``json_body`` is False: then no content type) in two messages."""
    pairs = (
        [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        if isinstance(headers, Mapping)
        else list(headers)
    )
    pairs.append((b"content-length", str(len(payload)).encode()))
    if json_body:
        pairs.append((b"content-type", b"application/json"))
    if close:
        pairs.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": pairs})
    await send({"type": "http.response.body", "body": payload})
