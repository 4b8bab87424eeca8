"""Held calls over HTTP, MCP and UnifiedToolClient, decided through the approval API (a real gateway process)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from colony.errors import ActionNotExecutedError
from colony.kernel import ColonyKernel, KernelSettings
from colony.surfaces.client import UnifiedToolClient
from tests.colony.surfaces.sample_tools import sample_repo
from tests.colony.surfaces.seed001 import call, mcp_over_http
from tests.services.gateway import StartGateway

TOKENS = {
    "ops-token": {"agent": "ops", "capabilities": ["*"], "operator": True},
    "scribe-token": {"agent": "scribe", "capabilities": ["tool:*", "kernel:read", "kernel:approve"]},
    "other-token": {"agent": "other", "capabilities": ["tool:*", "kernel:read"]},
}
CASE = {
    "rationale": "Record the outcome of the nightly calibration run for the operators to review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
}


@dataclass(frozen=True)
class Gateway:
    url: str
    home: Path

    @property
    def notes(self) -> Path:
        return self.home / "notes.txt"

    def kernel(self) -> ColonyKernel:
        return ColonyKernel(KernelSettings(home=self.home))

    def post(self, path: str, body: object, token: str = "scribe-token") -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, headers=auth(token), timeout=60)

    def get(self, path: str, token: str = "scribe-token") -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=auth(token), timeout=60)

    def hold(self, note: str) -> dict[str, object]:
        response = self.post("/v1/tool_call", {"tool_name": "append_note", "tool_args": {"note": note}, **CASE})
        assert response.status_code == 202, response.text
        return response.json()  # type: ignore[no-any-return]


def auth(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def gateway(start_gateway: StartGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway with tokens over the sample catalog, where the gate holds scribe's notes (failures at the tool)."""
    root = sample_repo(tmp_path_factory.mktemp("repo"))
    home = tmp_path_factory.mktemp("home")
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    kernel = ColonyKernel(KernelSettings(home=home))
    kernel.set_trust("scribe", 0.4)
    kernel.deposit("tool:append_note", "failure", 30.0)
    kernel.close()
    url = start_gateway(COLONY_REPO_ROOT=str(root), COLONY_HOME=str(home), COLONY_GATEWAY_TOKENS_FILE=str(tokens))
    yield Gateway(url, home)


def test_a_held_call_answers_202_and_runs_once_when_approved(gateway: Gateway) -> None:
    held = gateway.hold("approved over http")
    approval = held["approval"]
    assert isinstance(approval, dict) and held["status"] == "held" and approval["state"] == "pending"
    approval_id = approval["approval_id"]
    assert approval["url"] == f"/v1/approvals/{approval_id}"
    assert not gateway.notes.exists() or "approved over http" not in gateway.notes.read_text()

    mine = gateway.get("/v1/approvals?state=pending").json()["approvals"]
    assert approval_id in {item["approval_id"] for item in mine}
    assert gateway.get(f"/v1/approvals/{approval_id}", token="other-token").status_code == 403

    own = gateway.post(f"/v1/approvals/{approval_id}/approve", {"note": "mine"})  # scribe holds kernel:approve
    assert own.status_code == 403 and own.json()["error"]["type"] == "IdentityError"
    stranger = gateway.post(f"/v1/approvals/{approval_id}/approve", {}, token="other-token")
    assert stranger.status_code == 403 and stranger.json()["error"]["type"] == "CapabilityDeniedError"

    decided = gateway.post(f"/v1/approvals/{approval_id}/approve", {"note": "fine"}, token="ops-token")
    assert decided.status_code == 200, decided.text
    assert decided.json()["approval"]["reviewer"] == "ops"  # the principal's agent id by default
    twice = gateway.post(f"/v1/approvals/{approval_id}/reject", {"note": "too late"}, token="ops-token")
    assert twice.status_code == 409 and twice.json()["error"]["state"] == "approved"

    body = {"tool_name": "append_note", "tool_args": {"note": "approved over http"}, "approval_id": approval_id}
    changed = gateway.post("/v1/tool_call", {**body, "tool_args": {"note": "something else"}})
    assert changed.status_code == 400
    done = gateway.post("/v1/tool_call", body)
    assert done.status_code == 200, done.text
    assert done.json()["approval"]["reviewer"] == "ops" and done.json()["outcome"]["status"] == "recorded"
    verdict = done.json()["verdict"]  # the call ran: its verdict says so, and who approved it
    assert (verdict["decision"], verdict["approved_by"], verdict["approval_id"]) == ("execute", "ops", approval_id)
    assert gateway.notes.read_text().splitlines().count("approved over http") == 1
    replay = gateway.post("/v1/tool_call", body)
    assert replay.status_code == 409 and replay.json()["error"]["type"] == "ApprovalError"
    assert gateway.notes.read_text().splitlines().count("approved over http") == 1


async def test_a_long_poll_answers_when_the_request_is_decided(gateway: Gateway) -> None:
    approval_id = gateway.hold("rejected over http")["approval"]["approval_id"]  # type: ignore[index]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=60) as client:
        waiting = asyncio.create_task(client.get(f"/v1/approvals/{approval_id}?wait=25", headers=auth("scribe-token")))
        await asyncio.sleep(0.5)
        assert not waiting.done()
        rejected = await client.post(
            f"/v1/approvals/{approval_id}/reject", json={"note": "not tonight"}, headers=auth("ops-token")
        )
        assert rejected.status_code == 200
        answer = await waiting
    assert answer.status_code == 200 and answer.json()["approval"]["state"] == "rejected"
    body = {"tool_name": "append_note", "tool_args": {"note": "rejected over http"}, "approval_id": approval_id}
    refused = gateway.post("/v1/tool_call", body)
    assert refused.status_code == 409 and refused.json()["error"]["verdict"]["status"] == "rejected"
    too_long = gateway.get(f"/v1/approvals/{approval_id}?wait=31")
    assert too_long.status_code == 422


async def test_mcp_names_the_approval_and_an_operator_decides_it(gateway: Gateway) -> None:
    async with mcp_over_http(gateway.url, **auth("scribe-token")) as client:
        answer, failed = await call(client, "append_note", {"note": "approved over mcp", **CASE})
        assert failed and answer["status"] == "held"
        approval_id = answer["approval"]["approval_id"]
        assert approval_id in answer["approval"]["resolve"]["decide_tool"]
        listed, _ = await call(client, "colony_list_approvals", {"state": "pending"})
        assert approval_id in {item["approval_id"] for item in listed["approvals"]}
        own, failed = await call(client, "colony_decide_approval", {"approval_id": approval_id, "approve": True})
        assert failed and own["type"] == "IdentityError"
    async with mcp_over_http(gateway.url, **auth("ops-token")) as operator:
        names = {tool.name: tool for tool in (await operator.list_tools()).tools}
        assert names["colony_decide_approval"].title == "Approve or reject a held call"
        assert (
            names["colony_decide_approval"].meta and "colony/definition_sha256" in names["colony_decide_approval"].meta
        )
        decided, failed = await call(
            operator, "colony_decide_approval", {"approval_id": approval_id, "approve": True, "note": "ok"}
        )
        assert not failed and decided["approval"]["state"] == "approved"
    async with mcp_over_http(gateway.url, **auth("scribe-token")) as client:
        done, failed = await call(client, "append_note", {"note": "approved over mcp", "approval_id": approval_id})
        assert not failed, done
        assert done["outcome"]["status"] == "recorded"
    async with mcp_over_http(gateway.url, **auth("other-token")) as other:
        tools = {tool.name for tool in (await other.list_tools()).tools}
        assert "colony_decide_approval" not in tools and "colony_list_approvals" in tools


async def test_the_client_returns_the_held_call_and_resubmits_it(gateway: Gateway) -> None:
    client = UnifiedToolClient(token="scribe-token")
    arguments = {"note": "approved for the client"}
    answer = await client.acall_remote(gateway.url, "append_note", arguments, evidence={"logs": ["nightly"]}, **CASE)
    assert answer.held and answer.approval_id and answer.result is None
    with pytest.raises(ActionNotExecutedError, match=r"held for a person: approval \S+ is pending"):
        await client.acall_tool_remote(http_url=gateway.url, tool_name="append_note", tool_args=arguments, **CASE)
    gateway.post(f"/v1/approvals/{answer.approval_id}/approve", {}, token="ops-token")
    done = await client.acall_remote(gateway.url, "append_note", arguments, approval_id=answer.approval_id)
    assert not done.held and done.result["notes"] >= 1 and done.outcome and done.outcome["status"] == "recorded"


async def test_the_local_client_returns_the_held_call_and_resubmits_it(tmp_path: Path) -> None:
    from colony.runtime import Catalog, Runtime
    from tests.colony.runtime.conftest import write_registry

    kernel = ColonyKernel.from_env()
    kernel.set_trust("engineer-1", 0.4)
    runtime = Runtime(Catalog(write_registry(tmp_path, ["ledger_double"])))
    client = UnifiedToolClient(agent_id="engineer-1", runtime=runtime)
    arguments = {"path": str(tmp_path / "entry"), "text": "figures"}
    case = {**CASE, "evidence": {"tests": ["tests/test_ledger.py::test_write"]}}
    try:
        kernel.deposit("tool:ledger_double", "failure", 30.0)  # the gate holds it
        answer = await client.acall_local("ledger_double", arguments, **case)
        assert answer.held and answer.approval_id is not None and not (tmp_path / "entry").exists()
        kernel.approve(answer.approval_id, "ops", "")
        done = await client.acall_local("ledger_double", arguments, approval_id=answer.approval_id)
        assert done.result and (tmp_path / "entry").read_text() == "figures"
    finally:
        await client.aclose()
        kernel.close()
