"""Reading another gateway's answer: whatever comes back is a result, a Colony error, or a PeerError.

A peer (or anything listening where a peer should be) may answer with HTML, a
truncated body, JSON of the wrong shape or a body too large to hold; none of
these may surface as a 500, a pydantic traceback or an unbounded read. The
gateway's router and ``UnifiedToolClient`` read tool-call answers here; the
mesh catalog reads peer catalogs here.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from colony.errors import PeerError
from colony.surfaces.error_mapping import rebuild_error

__all__ = ["ToolCallAnswer", "read_capped", "read_json_object", "tool_call_answer"]


class ToolCallAnswer(BaseModel):
    """A successful ``/v1/tool_call`` answer, its fields checked."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    ok: StrictBool = Field(description="Whether the tool ran.")
    result: Any = Field(default=None, description="The tool's result.")
    error: Any = Field(default=None, description="The failure, rebuilt as a Colony error (when not ok).")
    node: str | None = Field(default=None, description="The node that served the call.")
    verdict: dict[str, Any] | None = Field(default=None, description="The gate's verdict.")
    outcome: dict[str, Any] | None = Field(default=None, description="The recorded outcome.")
    approval: dict[str, Any] | None = Field(
        default=None, description="The approval request of a held call (HTTP 202), or of an approved one."
    )

    @property
    def held(self) -> bool:
        """Whether the call waits for a person (an HTTP 202 naming its pending approval request)."""
        return not self.ok and self.approval is not None and self.approval.get("state") == "pending"


async def read_capped(response: httpx.Response, url: str, max_bytes: int) -> bytes:
    """The body of a streamed ``response``, or PeerError once it passes ``max_bytes``."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise PeerError(f"{url} answered with {int(declared)} bytes; the cap is {max_bytes} bytes")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise PeerError(f"{url} answered with more than {max_bytes} bytes; the cap is {max_bytes} bytes")
    return bytes(body)


def read_json_object(url: str, status: int, content: bytes) -> dict[str, Any]:
    """``content`` as a JSON object, or PeerError saying what it was instead."""
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        raise PeerError(f"{url} answered HTTP {status} with a body that is not JSON") from None
    if not isinstance(body, dict):
        raise PeerError(f"{url} answered HTTP {status} with JSON that is not an object")
    return body


def tool_call_answer(url: str, status: int, content: bytes) -> ToolCallAnswer:
    """A tool-call answer (a held call's 202 included); a failure is raised as the Colony error it names."""
    body = read_json_object(url, status, content)
    try:
        answer = ToolCallAnswer.model_validate(body)
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise PeerError(
            f"{url} answered HTTP {status} without a tool-call result ({where}: {problem['msg']})"
        ) from None
    if not answer.ok and not (status == 202 and answer.held):
        raise rebuild_error(answer.error, status)
    return answer
