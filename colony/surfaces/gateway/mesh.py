"""The mesh catalog (seed 004's ``/v1/catalog?enrich=true``): this node's tools and its peers', by node.

Every configured peer is asked at once for its own tools only (``local=true``, so
gateways that name each other never loop), each within the peer timeout and a
size cap. A peer that is down, slow, too large or answers something that is not
a catalog is reported in ``peers`` with what went wrong; it never stalls or fails
the listing. A tool served by several nodes at the same version is listed once,
with every node that serves it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from colony.errors import PeerError
from colony.runtime import Principal
from colony.surfaces.gateway.settings import GatewaySettings, Peer
from colony.surfaces.peer_answers import read_capped, read_json_object

__all__ = ["MeshCatalog", "PeerListing", "merge"]

_MAX_MESSAGE = 500  # characters of a failing peer's own error message shown in ``peers``


class _PeerTool(BaseModel):
    """The fields of a peer's catalog record the mesh relies on; the rest travels as it is."""

    model_config = ConfigDict(extra="allow")

    tool_id: str = Field(min_length=1, max_length=300, description="The tool's id, e.g. tool:unit_convert.")
    name: str = Field(min_length=1, max_length=200, description="The tool's catalog name.")
    version: str = Field(min_length=1, max_length=100, description="The tool's version.")
    policy_tags: list[str] = Field(default_factory=list, description="The tool's policy tags.")
    deterministic: StrictBool = Field(default=False, description="Whether the tool is deterministic.")
    node: str | None = Field(default=None, max_length=300, description="The node that serves it.")


class _PeerCatalog(BaseModel):
    """A peer's ``GET /v1/catalog`` answer."""

    model_config = ConfigDict(extra="ignore")

    ok: StrictBool = Field(description="Whether the peer answered.")
    node: str | None = Field(default=None, max_length=300, description="The peer's node name.")
    tools: list[_PeerTool] = Field(description="The peer's tools.")


@dataclass(frozen=True)
class PeerListing:
    """One peer's tools, or why there are none; ``status`` is what the ``peers`` section shows."""

    peer: Peer
    status: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)


class MeshCatalog:
    """Asks the configured peers for their catalogs, concurrently and within bounds."""

    def __init__(self, settings: GatewaySettings, http: httpx.AsyncClient) -> None:
        self.settings = settings
        self.http = http

    async def peers(self) -> list[PeerListing]:
        """Every configured peer's listing, in configuration order, each within the peer timeout."""
        return list(await asyncio.gather(*(self.listing(peer) for peer in self.settings.peers)))

    async def listing(self, peer: Peer) -> PeerListing:
        """``peer``'s own tools, or its status saying why there are none (never raises for the peer's fault)."""
        url = f"{peer.url}/v1/catalog"
        timeout = self.settings.peer_timeout_seconds
        try:
            with anyio.fail_after(timeout):  # the whole exchange, however slowly the peer drips its answer
                catalog = await self._fetch(peer, url)
        except (TimeoutError, httpx.TimeoutException):
            return _failed(peer, "timeout", f"{url} did not answer within {timeout:g} s")
        except httpx.HTTPError as error:
            return _failed(peer, "unreachable", f"{url} is unreachable: {type(error).__name__}: {error}")
        except PeerError as error:
            return _failed(peer, "error", str(error))
        node = catalog.node or peer.url
        records = [tool.model_dump() | {"node": tool.node or node} for tool in catalog.tools]
        return PeerListing(peer, {"url": peer.url, "node": node, "status": "ok", "tools": len(records)}, records)

    async def _fetch(self, peer: Peer, url: str) -> _PeerCatalog:
        headers = {"authorization": f"Bearer {peer.token.get_secret_value()}"} if peer.token else {}
        params = {"enrich": "true", "local": "true"}
        timeout = self.settings.peer_timeout_seconds
        async with self.http.stream("GET", url, params=params, headers=headers, timeout=timeout) as response:
            content = await read_capped(response, url, self.settings.peer_catalog_max_bytes)
        body = read_json_object(url, response.status_code, content)
        if response.status_code != 200 or body.get("ok") is not True:
            error = body.get("error")
            message = str(error.get("message") or "")[:_MAX_MESSAGE] if isinstance(error, dict) else ""
            raise PeerError(f"{url} answered HTTP {response.status_code}" + (f": {message}" if message else ""))
        try:
            return _PeerCatalog.model_validate(body)
        except ValidationError as error:
            problem = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise PeerError(
                f"{url} answered with something that is not a catalog ({where}: {problem['msg']})"
            ) from None


def _failed(peer: Peer, status: str, error: str) -> PeerListing:
    return PeerListing(peer, {"url": peer.url, "status": status, "error": error})


def merge(
    local: Iterable[dict[str, Any]],
    listings: Iterable[PeerListing],
    principal: Principal,
    keep: Callable[[dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    """This node's records, then the peers' it does not have, one per tool id and version, with every node.

    A peer's tool is listed only if ``principal`` may have calls routed to it (the capability token
    ``tool:<name>``, as the router demands) and ``keep`` accepts it (the caller's filters).
    """
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for record in local:
        merged[(record["tool_id"], record["version"])] = record | {"nodes": [record["node"]]}
    for listing in listings:
        for record in listing.records:
            if not principal.allows(f"tool:{record['name']}") or not keep(record):
                continue
            key = (record["tool_id"], record["version"])
            if key in merged:
                if record["node"] not in merged[key]["nodes"]:
                    merged[key]["nodes"].append(record["node"])
            else:
                merged[key] = record | {"nodes": [record["node"]]}
    return list(merged.values())
