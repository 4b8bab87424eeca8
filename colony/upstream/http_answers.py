"""Answers over streamable HTTP held to the server's message cap, whichever way they come.

The MCP SDK caps an answer sent as server-sent events (``max_sse_event_size``), but reads an
answer sent as plain ``application/json`` whole: a server answering one call with gigabytes
of JSON would fill the memory every caller shares. Here such a body is counted as it
arrives and cut off past the cap (at once, when its ``Content-Length`` says so): the SDK
then answers that one call with a parse error, and the session serves on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

__all__ = ["OVERSIZED_ANSWER", "CappedAnswers"]

#: What an answer cut off here says; ``UpstreamServer`` reads it to name the server's fault.
OVERSIZED_ANSWER = "an answer over the message cap"


class AnswerTooLarge(httpx2.StreamError):
    """A JSON answer past the cap (a StreamError: the SDK turns it into that call's error)."""


class _Counted(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, max_bytes: int, declared: int | None) -> None:
        self.inner = inner
        self.max_bytes = max_bytes
        self.declared = declared

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.declared is not None and self.declared > self.max_bytes:
            raise AnswerTooLarge(f"{OVERSIZED_ANSWER}: {self.declared} bytes declared, the cap is {self.max_bytes}")
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.max_bytes:
                raise AnswerTooLarge(f"{OVERSIZED_ANSWER}: past {self.max_bytes} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class CappedAnswers(httpx2.AsyncBaseTransport):
    """An HTTP transport whose plain JSON answers are at most ``max_bytes`` long."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, max_bytes: int) -> None:
        self.inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if not response.headers.get("content-type", "").startswith("application/json"):
            return response  # event streams: the SDK caps each event
        length = response.headers.get("content-length", "")
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        counted = _Counted(stream, self.max_bytes, int(length) if length.isdigit() else None)
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=counted, extensions=response.extensions
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
