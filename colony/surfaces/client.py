"""``UnifiedToolClient``: agent code's way to the same tools, in-process or through a gateway (seed 004).

Local calls run in this process through the same tool host the gateway uses;
remote calls POST to a gateway's ``/v1/tool_call``. Either way a failure is
raised as the Colony error it is, so bad input is a ``ValueError``
(``ToolInputError``) whose message names the problem.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx

from colony.errors import CallTimeoutError, PeerError, SurfaceError
from colony.surfaces.error_mapping import rebuild_error
from colony.surfaces.toolhost import Caller, LocalToolHost

__all__ = ["UnifiedToolClient"]

T = TypeVar("T")


class UnifiedToolClient:
    """Call catalog tools locally or on a Colony gateway, with one calling convention."""

    def __init__(
        self,
        *,
        agent_id: str | None = None,
        token: str | None = None,
        timeout_seconds: float = 30.0,
        toolhost: LocalToolHost | None = None,
    ) -> None:
        self.agent_id = agent_id or os.environ.get("COLONY_AGENT_ID") or "anonymous"
        self.token = token
        self.timeout_seconds = timeout_seconds
        self._toolhost = toolhost

    def get_local_toolhost(self) -> LocalToolHost:
        """The in-process tool host (``.list_tools()`` lists the catalog as seed 004 shows it)."""
        if self._toolhost is None:
            self._toolhost = LocalToolHost(timeout_seconds=self.timeout_seconds)
        return self._toolhost

    def call_tool_local(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Run ``name`` in this process and return its result."""
        return _run(self.acall_tool_local(name, args))

    async def acall_tool_local(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """``call_tool_local`` for code already inside an event loop."""
        answer = await self.get_local_toolhost().call(name, {} if args is None else args, Caller(self.agent_id))
        return answer.result

    def call_tool_remote(self, *, http_url: str, tool_name: str, tool_args: dict[str, Any] | None = None) -> Any:
        """Run ``tool_name`` on the gateway at ``http_url`` and return its result."""
        return _run(self.acall_tool_remote(http_url=http_url, tool_name=tool_name, tool_args=tool_args))

    async def acall_tool_remote(self, *, http_url: str, tool_name: str, tool_args: dict[str, Any] | None = None) -> Any:
        """``call_tool_remote`` for code already inside an event loop."""
        headers = {"x-colony-agent": self.agent_id}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        arguments = {} if tool_args is None else tool_args
        body = {"target": {"kind": "local"}, "tool_name": tool_name, "tool_args": arguments}
        url = f"{http_url.rstrip('/')}/v1/tool_call"
        try:
            async with httpx.AsyncClient(timeout=self.timeout_seconds) as http:
                response = await http.post(url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise CallTimeoutError(f"{url} did not answer within {self.timeout_seconds:g} s") from None
        except httpx.HTTPError as error:
            raise PeerError(f"{url} is unreachable: {type(error).__name__}: {error}") from None
        try:
            answer = response.json()
        except ValueError:
            raise PeerError(f"{url} answered HTTP {response.status_code} with a body that is not JSON") from None
        if not isinstance(answer, dict) or "ok" not in answer:
            raise PeerError(f"{url} answered HTTP {response.status_code} without a tool-call result")
        if not answer["ok"]:
            raise rebuild_error(answer.get("error"), response.status_code)
        return answer.get("result")


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise SurfaceError("the synchronous client was called inside an event loop; await its acall_* method instead")
