"""A reviewer is who authenticated, never who a body names; and a reviewer sees what they approve.

Through a real gateway process (HTTP, the official MCP client) and the CLI on the same
home: a ``kernel:approve`` principal that claims to be someone else is recorded as
itself everywhere (record, 409 message, the call's message, the agent's history, the
audit log), its claimed name shown only beside it; and every surface shows the held
call's arguments, declared secrets redacted and the text bounded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from colony.cli import app
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime.governed import secret_arguments
from tests.colony.surfaces.seed001 import call, mcp_over_http
from tests.security.signed_tools import SECRET, SignedNote
from tests.services.gateway import StartGateway

TOKENS = {
    "scribe-token": {"agent": "scribe", "capabilities": ["tool:*", "kernel:read"]},
    "carol-token": {"agent": "carol", "capabilities": ["tool:*", "kernel:read", "kernel:approve"]},
    "dave-token": {"agent": "dave", "capabilities": ["tool:*", "kernel:read", "kernel:approve"]},
}
CASE = {
    "rationale": "Post the nightly calibration note to the operators' channel for review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
}
FORGED = "ceo@corp"


@dataclass(frozen=True)
class Gateway:
    url: str
    home: Path

    def kernel(self) -> ColonyKernel:
        return ColonyKernel(KernelSettings(home=self.home))

    def post(self, path: str, body: object, token: str) -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, headers=auth(token), timeout=60)

    def get(self, path: str, token: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=auth(token), timeout=60)

    def hold(self, note: str) -> str:
        body = {"tool_name": "signed_note", "tool_args": {"note": note, "api_key": SECRET}, **CASE}
        response = self.post("/v1/tool_call", body, "scribe-token")
        assert response.status_code == 202, response.text
        return str(response.json()["approval"]["approval_id"])

    def cli(self, *args: str) -> object:
        return CliRunner().invoke(app, list(args), env={"COLONY_HOME": str(self.home), "COLUMNS": None})


def auth(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def gateway(start_gateway: StartGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway whose catalog holds signed_note, which the gate holds for scribe (failures at the tool)."""
    root = tmp_path_factory.mktemp("repo")
    entries = [
        {"name": "signed_note", "capability": "signed_note", "capability_fqn": "tests.security.signed_tools.SignedNote"}
    ]
    (root / ".colony").mkdir()
    (root / ".colony" / "tool-registry.json").write_text(json.dumps({"version": 1, "tools": entries}))
    home = tmp_path_factory.mktemp("home")
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    kernel = ColonyKernel(KernelSettings(home=home))
    kernel.set_trust("scribe", 0.4)
    kernel.deposit("tool:signed_note", "failure", 30.0)
    kernel.close()
    url = start_gateway(COLONY_REPO_ROOT=str(root), COLONY_HOME=str(home), COLONY_GATEWAY_TOKENS_FILE=str(tokens))
    yield Gateway(url, home)


def shows_arguments(arguments: object, note: str) -> None:
    assert isinstance(arguments, str) and note in arguments
    assert SECRET not in arguments and '"api_key": "[redacted]"' in arguments


def test_a_secret_is_declared_by_write_only_or_password_arguments() -> None:
    schema = SignedNote.actions()["signed_note"].input_schema
    assert secret_arguments(schema) == ["api_key"]
    assert secret_arguments({"properties": {"key": {"type": "string", "format": "password"}, "n": {}}}) == ["key"]


def test_a_forged_reviewer_over_http_is_refused_and_the_principal_is_recorded(gateway: Gateway) -> None:
    approval_id = gateway.hold("approved by carol over http")
    seen = gateway.get(f"/v1/approvals/{approval_id}", "carol-token")  # kernel:approve reads others' requests
    assert seen.status_code == 200, seen.text
    shows_arguments(seen.json()["approval"]["arguments"], "approved by carol over http")
    listed = gateway.get("/v1/approvals?state=pending", "carol-token").json()["approvals"]
    shows_arguments(next(a for a in listed if a["approval_id"] == approval_id)["arguments"], "carol over http")

    forged = gateway.post(f"/v1/approvals/{approval_id}/approve", {"reviewer": FORGED}, "carol-token")
    assert forged.status_code == 422 and "reviewer" in forged.text
    decided = gateway.post(f"/v1/approvals/{approval_id}/approve", {"display_name": FORGED}, "carol-token")
    assert decided.status_code == 200, decided.text
    record = decided.json()["approval"]
    assert (record["reviewer"], record["reviewer_display_name"]) == ("carol", FORGED)
    again = gateway.post(f"/v1/approvals/{approval_id}/reject", {}, "dave-token")
    assert again.status_code == 409 and f"approved by carol (as {FORGED})" in again.json()["error"]["message"]

    body = {"tool_name": "signed_note", "tool_args": {"note": "approved by carol over http", "api_key": SECRET}}
    done = gateway.post("/v1/tool_call", {**body, "approval_id": approval_id}, "scribe-token")
    assert done.status_code == 200, done.text
    assert done.json()["approval"]["decided_by"] == f"carol (as {FORGED})"
    kernel = gateway.kernel()
    try:
        proposal = kernel.get_approval(approval_id).proposal_id
        [history] = [c for c in kernel.consequence_log("scribe") if c.proposal_id == proposal]
        assert f"approved by carol (as {FORGED})" in history.actual_outcome
        assert f"approved by {FORGED}" not in history.actual_outcome
        [audited] = [e for e in kernel.audit_entries() if e.event == "approve" and approval_id in e.what]
        assert audited.who == "carol" and audited.detail.get("display_name") == FORGED
    finally:
        kernel.close()


def test_a_rejection_names_the_principal_in_the_agents_history(gateway: Gateway) -> None:
    approval_id = gateway.hold("rejected by dave")
    decided = gateway.post(f"/v1/approvals/{approval_id}/reject", {"display_name": FORGED, "note": "no"}, "dave-token")
    assert decided.status_code == 200 and decided.json()["approval"]["reviewer"] == "dave"
    kernel = gateway.kernel()
    try:
        proposal = kernel.get_approval(approval_id).proposal_id
        [history] = [c for c in kernel.consequence_log("scribe") if c.proposal_id == proposal]
        assert f"rejected by dave (as {FORGED}): no" in history.actual_outcome
    finally:
        kernel.close()


async def test_a_forged_reviewer_over_mcp_is_refused_and_the_principal_is_recorded(gateway: Gateway) -> None:
    approval_id = gateway.hold("approved by carol over mcp")
    async with mcp_over_http(gateway.url, **auth("carol-token")) as client:
        listed, failed = await call(client, "colony_list_approvals", {"state": "pending"})
        assert not failed
        shows_arguments(next(a for a in listed["approvals"] if a["approval_id"] == approval_id)["arguments"], "mcp")
        forged, failed = await call(
            client, "colony_decide_approval", {"approval_id": approval_id, "approve": True, "reviewer": FORGED}
        )
        assert failed and "reviewer" in json.dumps(forged)
        decided, failed = await call(
            client, "colony_decide_approval", {"approval_id": approval_id, "approve": True, "display_name": FORGED}
        )
        assert not failed, decided
        assert (decided["approval"]["reviewer"], decided["approval"]["reviewer_display_name"]) == ("carol", FORGED)
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "display_name" in tools["colony_decide_approval"].input_schema["properties"]
        assert "reviewer" not in tools["colony_decide_approval"].input_schema["properties"]


def test_the_cli_records_the_local_operator_and_shows_the_arguments(gateway: Gateway) -> None:
    approval_id = gateway.hold("approved from the cli")
    shown = gateway.cli("approvals", "show", approval_id)
    assert shown.exit_code == 0, shown.output  # type: ignore[attr-defined]
    assert "approved from the cli" in shown.stdout and SECRET not in shown.stdout  # type: ignore[attr-defined]
    assert '"api_key": "[redacted]"' in shown.stdout  # type: ignore[attr-defined]
    listed = gateway.cli("approvals", "list", "--state", "pending")
    assert approval_id in listed.stdout and "scribe" in listed.stdout  # type: ignore[attr-defined]
    assert "flow run" in listed.stdout and "…" not in listed.stdout  # type: ignore[attr-defined]

    forged = gateway.cli("approvals", "approve", approval_id, "--reviewer", FORGED)
    assert forged.exit_code == 2 and "--reviewer" in forged.output  # type: ignore[attr-defined]
    decided = gateway.cli("approvals", "approve", approval_id, "--display-name", FORGED)
    assert decided.exit_code == 0, decided.output  # type: ignore[attr-defined]
    assert f"local-operator (as {FORGED})" in decided.stdout  # type: ignore[attr-defined]
    record = json.loads(gateway.cli("approvals", "show", approval_id, "--json").stdout)  # type: ignore[attr-defined]
    assert (record["reviewer"], record["reviewer_display_name"]) == ("local-operator", FORGED)
    assert f"colony tools call signed_note ... --approval {approval_id}" in decided.stderr  # type: ignore[attr-defined]


def test_shown_arguments_are_bounded_and_marked_when_cut(gateway: Gateway) -> None:
    approval_id = gateway.hold("x" * 60_000)
    arguments = gateway.get(f"/v1/approvals/{approval_id}", "carol-token").json()["approval"]["arguments"]
    assert len(arguments) <= 16_384 and "[cut:" in arguments and SECRET not in arguments
