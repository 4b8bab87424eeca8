"""The approval API: see held calls, wait for a decision, decide one.

    GET  /v1/approvals                 an operator sees every request, an agent its own
    GET  /v1/approvals/{id}?wait=S     long-polls up to S seconds (at most 30) while pending
    POST /v1/approvals/{id}/approve    kernel:approve (operators); never one's own request
    POST /v1/approvals/{id}/reject

The long poll holds no worker thread: it sleeps on the event loop and reads the
kernel in a short thread offload, backing off from 0.2 s to 2 s between reads. It
holds a connection, though, so each principal may hold only a few at once
(``PrincipalWaits``); one more is answered 429 with ``Retry-After``, counted for the
audit log like any call over a limit.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import anyio
import anyio.to_thread
from fastapi import APIRouter, Path, Query, Request

from colony.errors import RateLimitedError
from colony.runtime import Principal, Runtime
from colony.runtime.held import resolution
from colony.runtime.kernel_access import authorize_approval_decision, visible_approvals
from colony.surfaces.auth import Authenticator, principal_of
from colony.surfaces.gateway.models import DecisionRequest
from colony.surfaces.gateway.shares import PrincipalWaits

__all__ = ["MAX_WAIT_SECONDS", "approval_links", "approval_routes"]

MAX_WAIT_SECONDS = 30.0
_FIRST_POLL, _MAX_POLL = 0.2, 2.0
ApprovalId = Annotated[str, Path(min_length=1, max_length=64, description="The approval request's id.")]


def approval_links(approval_id: str) -> dict[str, Any]:
    """Where a held call's approval lives over HTTP, and how to resolve it."""
    url = f"/v1/approvals/{approval_id}"
    return {
        "url": url,
        "resolve": {
            **resolution(approval_id),
            "approve_url": f"POST {url}/approve",
            "reject_url": f"POST {url}/reject",
            "wait_url": f"GET {url}?wait={MAX_WAIT_SECONDS:g}",
            "resubmit_url": f"POST /v1/tool_call with the same tool_name and tool_args and approval_id={approval_id!r}",
        },
    }


def approval_routes(runtime: Runtime, authenticator: Authenticator, waits: PrincipalWaits) -> APIRouter:
    """The approval API over ``runtime``'s kernel, for the callers ``authenticator`` knows.

    ``waits`` bounds each principal's long polls.
    """
    router = APIRouter(prefix="/v1/approvals", tags=["approvals"])

    def kernel() -> Any:
        return runtime.kernels.get()

    async def caller(request: Request) -> Principal:
        return await principal_of(authenticator, request.headers.get("authorization"))

    async def read(approval_id: str, principal: Principal) -> Any:
        approval = await anyio.to_thread.run_sync(kernel().get_approval, approval_id)
        async with runtime.refusals.forbidden(principal.agent_id, approval.agent_id, f"read approval {approval_id}"):
            visible_approvals(principal, approval.agent_id)  # an agent reads only its own
        return approval

    def shown(approval: Any) -> dict[str, Any]:
        return approval.model_dump(mode="json") | approval_links(approval.approval_id)

    @router.get("")
    async def list_approvals(
        request: Request,
        state: Annotated[str | None, Query(description="pending, approved, rejected or expired.")] = None,
        agent_id: Annotated[str | None, Query(max_length=256, description="Only this agent's (operators).")] = None,
    ) -> dict[str, Any]:
        """Approval requests, newest first: all of them for an operator, the caller's own for an agent."""
        principal = await caller(request)
        async with runtime.refusals.forbidden(principal.agent_id, agent_id, "list approvals"):
            agent = visible_approvals(principal, agent_id)
        found = await anyio.to_thread.run_sync(lambda: kernel().list_approvals(state=state, agent_id=agent))
        return {"ok": True, "approvals": [shown(approval) for approval in found]}

    @router.get("/{approval_id}")
    async def get_approval(
        request: Request,
        approval_id: ApprovalId,
        wait: Annotated[
            float, Query(ge=0, le=MAX_WAIT_SECONDS, description="Wait up to this many seconds while it is pending.")
        ] = 0.0,
    ) -> dict[str, Any]:
        """One request; with ``wait``, answers as soon as it is decided (or when the wait is over)."""
        principal = await caller(request)
        approval = await read(approval_id, principal)
        if approval.state.value != "pending" or not wait:
            return {"ok": True, "approval": shown(approval)}
        try:
            waits.take(principal.agent_id)
        except RateLimitedError as error:
            runtime.refusals.note(principal.agent_id, None, f"wait approval {approval_id}", 429, str(error))
            await runtime.refusals.flush_if_due()
            raise
        try:
            deadline, pause = time.monotonic() + wait, _FIRST_POLL
            while approval.state.value == "pending" and time.monotonic() < deadline:
                await anyio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, _MAX_POLL)
                approval = await read(approval_id, principal)
        finally:
            waits.give(principal.agent_id)
        return {"ok": True, "approval": shown(approval)}

    async def decide(request: Request, approval_id: str, body: DecisionRequest, approve: bool) -> dict[str, Any]:
        principal = await caller(request)
        asked = await anyio.to_thread.run_sync(kernel().get_approval, approval_id)
        verb = "approve" if approve else "reject"
        async with runtime.refusals.forbidden(principal.agent_id, asked.agent_id, f"{verb} approval {approval_id}"):
            authorize_approval_decision(principal, asked.agent_id)
        decide_on = kernel().approve if approve else kernel().reject
        decided = await anyio.to_thread.run_sync(
            lambda: decide_on(approval_id, principal.agent_id, body.note, display_name=body.display_name)
        )
        return {"ok": True, "approval": shown(decided)}

    @router.post("/{approval_id}/approve")
    async def approve(request: Request, approval_id: ApprovalId, body: DecisionRequest) -> dict[str, Any]:
        """Approve a pending request (kernel:approve; 409 when it was already decided or expired)."""
        return await decide(request, approval_id, body, True)

    @router.post("/{approval_id}/reject")
    async def reject(request: Request, approval_id: ApprovalId, body: DecisionRequest) -> dict[str, Any]:
        """Reject a pending request (kernel:approve; 409 when it was already decided or expired)."""
        return await decide(request, approval_id, body, False)

    return router
