"""The gateway's refusals written straight to ASGI, for guards that answer before the app runs."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Send

__all__ = ["refusal_body", "send_json"]

_INVALID_REQUEST = -32600


def refusal_body(message: str, *, jsonrpc: bool, error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The gateway's error body, or a JSON-RPC error (for /mcp), saying ``message``."""
    if jsonrpc:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": _INVALID_REQUEST, "message": message}}
    return {"ok": False, "error": error or {"type": "HTTPError", "message": message}}


async def send_json(
    send: Send,
    status: int,
    body: dict[str, Any] | list[Any],
    *,
    headers: dict[str, str] | None = None,
    close: bool = False,
) -> None:
    """Answer ``status`` with ``body`` as JSON; ``close`` ends the connection after it (its request is unread)."""
    payload = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw.extend((name.encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items())
    if close:
        raw.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})
