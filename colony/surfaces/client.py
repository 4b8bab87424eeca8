"""``UnifiedToolClient``: agent code's way to the same tools, in-process or through a gateway (seed 004).

Local calls go through this process's Runtime as the local operator, acting for
the agent named by ``agent_id=``; remote calls POST to a gateway's
``/v1/tool_call`` with a bearer token, whose principal the gateway decides.
Either way a governed call carries its case to the gate (rationale, rollback
plan, evidence), and a failure is raised as the Colony error it is: bad input
is a ``ValueError`` (``ToolInputError``) naming the problem, a refused call an
``ActionNotExecutedError`` carrying the verdict. A held call waits for a person:
``acall_local``/``acall_remote`` return it (``answer.held``, ``answer.approval_id``),
the result-only calls raise ``ActionNotExecutedError`` naming the approval; the same
call with ``approval_id=`` runs once the request is approved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from colony.errors import ActionNotExecutedError, CallTimeoutError, PeerError, SurfaceError
from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, GateCase, Runtime, wire
from colony.surfaces.definitions import catalog_record, unavailable_record
from colony.surfaces.peer_answers import tool_call_answer

__all__ = ["LocalTools", "ToolAnswer", "UnifiedToolClient"]

T = TypeVar("T")


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's result; for a governed call also the gate's verdict and the recorded outcome."""

    result: Any
    verdict: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None
    node: str | None = None
    approval: dict[str, Any] | None = None

    @property
    def held(self) -> bool:
        """Whether the call waits for a person (its approval request is pending); ``result`` is then None."""
        return self.approval is not None and self.approval.get("state") == "pending"

    @property
    def approval_id(self) -> str | None:
        """The approval request of a held (or approved) call."""
        return None if self.approval is None else self.approval.get("approval_id")

    def raise_if_held(self) -> ToolAnswer:
        """Self, unless the call is held: then ActionNotExecutedError naming the approval request."""
        if self.held:
            raise ActionNotExecutedError(
                f"the call is held for a person: approval {self.approval_id} is pending; call again with "
                f"approval_id={self.approval_id!r} once it is approved",
                verdict={**(self.verdict or {}), "status": "held", "approval": self.approval},
            )
        return self


@dataclass(frozen=True)
class LocalTools:
    """The tools this process serves its local operator, as seed 004's ToolSchema records."""

    runtime: Runtime

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the local operator may call, in name order."""
        return [catalog_record(tool.cls) for tool in self.runtime.visible_tools(LOCAL_OPERATOR)]

    def unavailable_tools(self) -> list[dict[str, Any]]:
        """The catalog entries that failed to load, in name order, each with the reason (as ``/v1/catalog``)."""
        return [unavailable_record(tool) for _, tool in sorted(self.runtime.catalog.unavailable.items())]


class UnifiedToolClient:
    """Call catalog tools locally or on a Colony gateway, with one calling convention."""

    def __init__(
        self,
        *,
        agent_id: str | None = None,
        token: str | None = None,
        timeout_seconds: float = 30.0,
        runtime: Runtime | None = None,
    ) -> None:
        self.agent_id = agent_id
        self.token = token
        self.timeout_seconds = timeout_seconds
        self._runtime = runtime

    def get_local_runtime(self) -> Runtime:
        """The in-process runtime (created on first use)."""
        if self._runtime is None:
            self._runtime = Runtime(timeout_seconds=self.timeout_seconds)
        return self._runtime

    def get_local_toolhost(self) -> LocalTools:
        """The local catalog as seed 004's client shows it (``.list_tools()``)."""
        return LocalTools(self.get_local_runtime())

    def call_tool_local(self, name: str, args: dict[str, Any] | None = None, **case: Any) -> Any:
        """Run ``name`` in this process and return its result (``case``: rationale, rollback_plan, evidence)."""
        return _run(self.acall_tool_local(name, args, **case))

    async def acall_tool_local(self, name: str, args: dict[str, Any] | None = None, **case: Any) -> Any:
        """``call_tool_local`` for code already inside an event loop."""
        return (await self.acall_local(name, args, **case)).raise_if_held().result

    async def acall_local(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        rationale: str | None = None,
        rollback_plan: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        approval_id: str | None = None,
    ) -> ToolAnswer:
        """Run ``name`` here: the result with the verdict and record of a governed call, or the held call."""
        request = CallRequest(
            tool=name,
            arguments={} if args is None else args,
            agent_id=self.agent_id,
            rationale=rationale,
            rollback_plan=rollback_plan,
            evidence=evidence,
            approval_id=approval_id,
        )
        outcome = await self.get_local_runtime().call(request, LOCAL_OPERATOR)
        if outcome.status is not CallStatus.HELD:
            outcome.raise_for_status()
        return ToolAnswer(
            result=outcome.result,
            verdict=wire(outcome.verdict),
            outcome=wire(outcome.record),
            approval=wire(outcome.approval),
        )

    def call_tool_remote(
        self, *, http_url: str, tool_name: str, tool_args: dict[str, Any] | None = None, **case: Any
    ) -> Any:
        """Run ``tool_name`` on the gateway at ``http_url`` and return its result."""
        return _run(self.acall_tool_remote(http_url=http_url, tool_name=tool_name, tool_args=tool_args, **case))

    async def acall_tool_remote(
        self, *, http_url: str, tool_name: str, tool_args: dict[str, Any] | None = None, **case: Any
    ) -> Any:
        """``call_tool_remote`` for code already inside an event loop."""
        return (await self.acall_remote(http_url, tool_name, tool_args, **case)).raise_if_held().result

    async def acall_remote(
        self,
        http_url: str,
        tool_name: str,
        tool_args: dict[str, Any] | None = None,
        *,
        rationale: str | None = None,
        rollback_plan: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        approval_id: str | None = None,
    ) -> ToolAnswer:
        """Run ``tool_name`` on a gateway: the result, verdict and record of a governed call, or the held call."""
        headers = {}
        if self.agent_id:
            headers["x-colony-agent"] = self.agent_id
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        body: dict[str, Any] = {"target": {"kind": "local"}, "tool_name": tool_name, "tool_args": tool_args or {}}
        case = GateCase.read(
            {"rationale": rationale, "rollback_plan": rollback_plan, "evidence": evidence}
        )  # refused here as the gateway would refuse it
        body |= case.model_dump(exclude_none=True)
        if approval_id is not None:
            body["approval_id"] = approval_id
        url = f"{http_url.rstrip('/')}/v1/tool_call"
        try:
            async with httpx.AsyncClient(timeout=self.timeout_seconds) as http:
                response = await http.post(url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise CallTimeoutError(f"{url} did not answer within {self.timeout_seconds:g} s") from None
        except httpx.HTTPError as error:
            raise PeerError(f"{url} is unreachable: {type(error).__name__}: {error}") from None
        answer = tool_call_answer(url, response.status_code, response.content)
        return ToolAnswer(
            result=answer.result,
            verdict=answer.verdict,
            outcome=answer.outcome,
            node=answer.node,
            approval=answer.approval,
        )

    async def aclose(self) -> None:
        """Shut down the local runtime's tool instances, if one was created."""
        if self._runtime is not None:
            await self._runtime.aclose()


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    coroutine.close()
    raise SurfaceError("the synchronous client was called inside an event loop; await its acall_* method instead")
