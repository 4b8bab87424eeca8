"""Routing a call to a node: this one, a named peer, or the first healthy node with the tool.

This is routing between gateways, not a scheduler: heavy or long work belongs
in Prefect deployments and AWS Batch. A peer is only ever one the operator
configured, so a caller cannot make the gateway fetch an arbitrary URL.

A routed call carries the caller's own credential, and the peer authenticates and
judges the caller itself: its capabilities, its policies, its limits. Sent with this
gateway's peer token, every caller of this gateway would reach the peer as this
gateway (an operator there), its policies and limits keyed on one principal. The peer
token lists the peer's catalog, and carries calls only when this gateway is open (no
credentials: every caller here is already its local operator).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

from colony.errors import CallTimeoutError, CapabilityDeniedError, PeerError, ToolInputError, UnknownToolError
from colony.runtime import Acting, CallOutcome, CallRequest, CallStatus, Principal, Runtime, wire
from colony.runtime.steps import Call
from colony.surfaces.gateway.mesh import MeshCatalog
from colony.surfaces.gateway.models import ToolCallRequest
from colony.surfaces.gateway.settings import GatewaySettings, Peer
from colony.surfaces.peer_answers import tool_call_answer

__all__ = ["Routed", "Router"]

_CATALOG_TTL_SECONDS = 30.0


@dataclass(frozen=True)
class Routed:
    """A call's result (with the verdict and record of a governed call) and the node that served it."""

    result: Any
    node: str
    verdict: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None

    @property
    def held(self) -> bool:
        """Whether the call waits for a person (its approval request is pending)."""
        return self.approval is not None and self.approval.get("state") == "pending"


class Router:
    """Sends each call where its target says, with the gateway's timeouts."""

    def __init__(self, runtime: Runtime, settings: GatewaySettings, http: httpx.AsyncClient) -> None:
        self.runtime = runtime
        self.settings = settings
        self.http = http
        self.mesh = MeshCatalog(settings, http)
        self._peer_tools: dict[str, tuple[float, frozenset[str]]] = {}

    async def call(
        self, request: ToolCallRequest, principal: Principal, agent: str | None, credential: str | None
    ) -> Routed:
        """Run ``request`` for ``principal`` (acting for ``agent``) on the node its target names.

        ``credential`` is the ``Authorization`` the caller authenticated with (None on an open
        gateway); a peer is shown that, not this gateway's token.
        """
        target = request.target
        catalog = self.runtime.catalog
        # a tool whose entry failed to load here is sought on the peers; with none, the local refusal says why
        local = request.tool_name in catalog.tools or (
            request.tool_name in catalog.unavailable and not self.settings.peers
        )
        if target.kind == "local" or (target.kind == "auto" and local):
            return await self._local(request, principal, agent)
        token = f"tool:{request.tool_name}"
        async with self.runtime.refusals.forbidden(principal.agent_id, agent, f"route {request.tool_name}"):
            if not principal.allows(token):
                raise CapabilityDeniedError(
                    f"routing {request.tool_name} to another node requires the capability token {token}, "
                    f"which principal {principal.agent_id!r} does not hold",
                    missing=[token],
                )
            principal.acting_for(agent)  # a caller names no agent but its own, here or at a peer
        caller = agent or principal.agent_id
        if target.kind == "remote" and target.url is None:
            raise ToolInputError.for_field("target.url", "target.url is required when target.kind is 'remote'")
        routed: list[Routed] = []

        async def forward(call: Call) -> CallOutcome:
            """The handler of a call another node runs (behind this node's steps: its limits hold here too)."""
            peer = self._peer(target.url) if target.kind == "remote" and target.url else None
            routed.append(
                await (
                    self._remote(peer, request, caller, credential)
                    if peer
                    else self._from_peers(request, caller, credential)
                )
            )
            acting = Acting(caller, acted_by=principal.agent_id if caller != principal.agent_id else None)
            return CallOutcome(CallStatus.EXECUTED, tool=request.tool_name, version="", action="", acting=acting)

        await self.runtime.dispatch(Call(CallRequest(tool=request.tool_name, agent_id=agent), principal), forward)
        return routed[0]

    async def _local(self, request: ToolCallRequest, principal: Principal, agent: str | None) -> Routed:
        call = CallRequest(
            tool=request.tool_name,
            arguments=request.tool_args,
            agent_id=agent,
            rationale=request.rationale,
            rollback_plan=request.rollback_plan,
            evidence=request.evidence,
            approval_id=request.approval_id,
        )
        outcome = await self.runtime.call(call, principal)
        if outcome.status is CallStatus.HELD and outcome.approval is not None:
            return Routed(None, self.settings.node, verdict=wire(outcome.verdict), approval=wire(outcome.approval))
        outcome.raise_for_status()
        return Routed(
            result=outcome.result,
            node=self.settings.node,
            verdict=wire(outcome.verdict),
            record=wire(outcome.record),
            approval=wire(outcome.approval),
        )

    async def _from_peers(self, request: ToolCallRequest, caller: str, credential: str | None) -> Routed:
        """The first peer that lists the tool and can be reached runs it.

        A peer that is down or slow to list its catalog is skipped; a call that
        times out is not retried elsewhere, since it may have run.
        """
        tried = []
        for peer in self.settings.peers:
            try:
                if request.tool_name not in await self._tools_of(peer):
                    tried.append(f"{peer.url} (does not have it)")
                    continue
            except (PeerError, CallTimeoutError) as error:
                tried.append(f"{peer.url} ({error})")
                continue
            try:
                return await self._remote(peer, request, caller, credential)
            except PeerError as error:
                tried.append(f"{peer.url} ({error})")
        where = "; ".join(tried) or "no peers are configured"
        broken = self.runtime.catalog.unavailable.get(request.tool_name)
        if broken is not None:
            raise broken.error(f"no healthy peer serves {request.tool_name!r} ({where}), and here the ")
        raise UnknownToolError(f"no healthy node serves {request.tool_name!r}: not in the local catalog; {where}")

    async def _remote(self, peer: Peer, request: ToolCallRequest, caller: str, credential: str | None) -> Routed:
        forwarded = request.model_copy(update={"target": request.target.model_copy(update={"kind": "local"})})
        response = await self._send(
            peer,
            "POST",
            "/v1/tool_call",
            json=forwarded.model_dump(mode="json", exclude_none=True),
            headers={"x-colony-agent": caller},
            credential=credential,
        )
        answer = tool_call_answer(f"{peer.url}/v1/tool_call", response.status_code, response.content)
        return Routed(
            result=answer.result,
            node=answer.node or peer.url,
            verdict=answer.verdict,
            record=answer.outcome,
            approval=answer.approval,
        )

    async def _tools_of(self, peer: Peer) -> frozenset[str]:
        cached = self._peer_tools.get(peer.url)
        if cached is not None and time.monotonic() - cached[0] < _CATALOG_TTL_SECONDS:
            return cached[1]
        listing = await self.mesh.listing(peer)  # within the peer timeout and the catalog size cap
        if listing.status["status"] != "ok":
            raise PeerError(listing.status["error"])
        names = frozenset(record["name"] for record in listing.records)
        self._peer_tools[peer.url] = (time.monotonic(), names)
        return names

    async def _send(
        self, peer: Peer, method: str, path: str, *, credential: str | None = None, **options: Any
    ) -> httpx.Response:
        """A request to ``peer``, as the caller (its ``credential``) or, without one, with the peer token."""
        headers = dict(options.pop("headers", {}))
        if credential is not None:
            headers["authorization"] = credential
        elif peer.token:
            headers["authorization"] = f"Bearer {peer.token.get_secret_value()}"
        try:
            return await self.http.request(
                method, f"{peer.url}{path}", headers=headers, timeout=self.settings.peer_timeout_seconds, **options
            )
        except httpx.TimeoutException:
            raise CallTimeoutError(
                f"{peer.url} did not answer within {self.settings.peer_timeout_seconds:g} s"
            ) from None
        except httpx.HTTPError as error:
            raise PeerError(f"{peer.url} is unreachable: {type(error).__name__}: {error}") from None

    def _peer(self, url: str) -> Peer:
        wanted = url.rstrip("/")
        for peer in self.settings.peers:
            if peer.url == wanted:
                return peer
        known = ", ".join(peer.url for peer in self.settings.peers) or "none"
        raise ToolInputError.for_field(
            "target.url", f"{url} is not a configured peer of this gateway", expected=f"one of: {known}"
        )
