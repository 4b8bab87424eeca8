"""Seed 004's mesh catalog: ``/v1/catalog?enrich=true`` on a gateway with peers lists their tools too.

Two real gateways on loopback (each ``colony gateway`` in its own process), plus
a dead peer, a peer answering garbage, a slow one and a huge one: the live peer's
tools appear with their node, a tool both serve at one version is listed once,
and every failing peer is reported, not fatal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from colony.runtime import Principal
from colony.surfaces.gateway.mesh import PeerListing, merge
from colony.surfaces.gateway.settings import Peer
from tests.colony.surfaces.conftest import UNREACHABLE_PEER
from tests.colony.surfaces.sample_tools import sample_repo
from tests.services.gateway import StartGateway
from tests.services.peers import StartMisbehavingPeer

CAP = 65536


def catalog(url: str, **params: Any) -> dict[str, Any]:
    response = httpx.get(f"{url}/v1/catalog", params=params, timeout=30)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_enrich_lists_the_mesh_and_reports_failing_peers(
    start_gateway: StartGateway, start_misbehaving_peer: StartMisbehavingPeer, tmp_path: Path
) -> None:
    peer_b = start_gateway(COLONY_REPO_ROOT=str(sample_repo(tmp_path / "repo")), COLONY_GATEWAY_NODE_ID="node-b")
    garbage, slow, huge, wrong_shape = (start_misbehaving_peer() for _ in range(4))
    garbage.answer("/v1/catalog", b"<html>a proxy error page</html>")
    slow.answer("/v1/catalog", {"ok": True, "tools": []}, delay_seconds=30)
    huge.answer("/v1/catalog", b" " * 65536, repeat=64)  # 4 MiB of padding, over the cap
    wrong_shape.answer("/v1/catalog", {"ok": True, "tools": [{"name": "x", "version": 1}]})
    peers = [peer_b, UNREACHABLE_PEER, garbage.url, slow.url, huge.url, wrong_shape.url]
    node_a = start_gateway(
        COLONY_GATEWAY_NODE_ID="node-a",
        COLONY_GATEWAY_PEERS=",".join(peers),
        COLONY_GATEWAY_PEER_TIMEOUT="2",
        COLONY_GATEWAY_PEER_CATALOG_MAX_BYTES=str(CAP),
    )

    mesh = catalog(node_a, enrich="true")
    tools = {(tool["name"], tool["version"]): tool for tool in mesh["tools"]}
    assert len(tools) == len(mesh["tools"])  # one record per tool id and version
    assert tools[("append_note", "1.0.0")]["node"] == "node-b"
    assert tools[("append_note", "1.0.0")]["nodes"] == ["node-b"]
    assert tools[("unit_convert", "1.0.1")]["nodes"] == ["node-a", "node-b"]  # both serve it
    assert tools[("pii_redact", tools_version(mesh, "pii_redact"))]["nodes"] == ["node-a"]
    assert "mcp" in tools[("append_note", "1.0.0")]  # the peer's enriched record travels whole

    status = {peer["url"]: peer for peer in mesh["peers"]}
    assert [peer["url"] for peer in mesh["peers"]] == peers
    assert status[peer_b] == {"url": peer_b, "node": "node-b", "status": "ok", "tools": 2}
    assert status[UNREACHABLE_PEER]["status"] == "unreachable"
    assert status[garbage.url]["status"] == "error" and "not JSON" in status[garbage.url]["error"]
    assert status[slow.url]["status"] == "timeout" and "2 s" in status[slow.url]["error"]
    assert status[huge.url]["status"] == "error" and f"the cap is {CAP} bytes" in status[huge.url]["error"]
    assert status[wrong_shape.url]["status"] == "error"
    assert "tools.0.tool_id" in status[wrong_shape.url]["error"]
    assert garbage.requests == ["GET /v1/catalog?enrich=true&local=true"]  # peers list their own tools only

    writes = catalog(node_a, enrich="true", policy_tag="writes_files")["tools"]
    assert [tool["name"] for tool in writes] == ["append_note"]  # the caller's filters apply to peers' tools
    plain = catalog(node_a)
    assert "peers" not in plain and "append_note" not in {tool["name"] for tool in plain["tools"]}
    local = catalog(node_a, enrich="true", local="true")
    assert local["peers"] == [] and {tool["node"] for tool in local["tools"]} == {"node-a"}


def test_a_peer_lists_only_what_the_callers_tokens_may_route(start_gateway: StartGateway, tmp_path: Path) -> None:
    peer_b = start_gateway(COLONY_REPO_ROOT=str(sample_repo(tmp_path / "repo")), COLONY_GATEWAY_NODE_ID="node-b")
    tokens = '{"convert-token": {"agent": "converter", "capabilities": ["tool:unit_convert"]}}'
    node_a = start_gateway(COLONY_GATEWAY_PEERS=peer_b, COLONY_GATEWAY_TOKENS=tokens)
    response = httpx.get(
        f"{node_a}/v1/catalog", params={"enrich": "true"}, headers={"authorization": "Bearer convert-token"}, timeout=30
    )
    assert response.status_code == 200, response.text
    assert [tool["name"] for tool in response.json()["tools"]] == ["unit_convert"]  # not append_note


def tools_version(mesh: dict[str, Any], name: str) -> str:
    return next(str(tool["version"]) for tool in mesh["tools"] if tool["name"] == name)


def test_auto_routing_reads_peer_catalogs_within_the_same_bounds(
    start_gateway: StartGateway, start_misbehaving_peer: StartMisbehavingPeer, tmp_path: Path
) -> None:
    peer_b = start_gateway(COLONY_GATEWAY_NODE_ID="node-b")  # the repository's catalog: it has doc_summarize
    huge, slow = start_misbehaving_peer(), start_misbehaving_peer()
    huge.answer("/v1/catalog", b" " * 65536, repeat=64)
    slow.answer("/v1/catalog", {"ok": True, "tools": []}, delay_seconds=30)
    front = start_gateway(
        COLONY_REPO_ROOT=str(sample_repo(tmp_path / "repo")),
        COLONY_GATEWAY_PEERS=f"{huge.url},{slow.url},{peer_b}",
        COLONY_GATEWAY_PEER_TIMEOUT="10",  # bounds the slow peer (30 s), not peer_b's first call on a loaded machine
        COLONY_GATEWAY_PEER_CATALOG_MAX_BYTES=str(CAP),
    )
    body = {"target": {"kind": "auto"}, "tool_name": "doc_summarize", "tool_args": {"text": "One. Two. Three."}}
    response = httpx.post(f"{front}/v1/tool_call", json=body, timeout=60)
    assert response.status_code == 200, response.text
    assert response.json()["node"] == "node-b"
    body["tool_name"] = "pdf_render"
    missing = httpx.post(f"{front}/v1/tool_call", json=body, timeout=60).json()["error"]["message"]
    assert f"the cap is {CAP} bytes" in missing and "did not answer within 10 s" in missing


def test_merge_keys_on_tool_id_and_version() -> None:
    def record(name: str, version: str, node: str) -> dict[str, Any]:
        return {"tool_id": f"tool:{name}", "name": name, "version": version, "node": node, "policy_tags": []}

    local = [record("unit_convert", "1.0.1", "a")]
    listings = [
        PeerListing(
            Peer(url="http://b"), {}, [record("unit_convert", "1.0.1", "b"), record("unit_convert", "2.0.0", "b")]
        ),
        PeerListing(
            Peer(url="http://c"), {}, [record("unit_convert", "2.0.0", "c"), record("shell_exec", "1.0.3", "c")]
        ),
    ]
    merged = merge(local, listings, Principal.of("caller", ["tool:unit_convert"]), lambda _: True)
    assert [(tool["version"], tool["node"], tool["nodes"]) for tool in merged] == [
        ("1.0.1", "a", ["a", "b"]),
        ("2.0.0", "b", ["b", "c"]),
    ]  # shell_exec: the caller may not route to it
