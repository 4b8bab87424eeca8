"""A connected server's tools on every surface of a real gateway process: HTTP, MCP (official client), the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from colony.kernel import ColonyKernel, KernelSettings
from tests.colony.surfaces.seed001 import call, mcp_over_http
from tests.services.gateway import StartGateway
from tests.services.upstream import Upstream

TOKENS = {
    "ops-token": {"agent": "ops", "capabilities": ["*"], "operator": True},
    "scribe-token": {"agent": "scribe", "capabilities": ["tool:files__write_file", "tool:files__read_text_file"]},
    "reader-token": {"agent": "reader", "capabilities": ["tool:files__read_text_file"]},
}
CASE = {
    "rationale": "Write the nightly report where the dashboard reads it",
    "rollback_plan": "Delete the report file again; nothing else is touched",
    "evidence": {"tests": ["tests/test_report.py::test_layout"], "scope": ["report.txt"]},
}
COLONY = Path(sys.executable).parent / "colony"


@dataclass(frozen=True)
class Gateway:
    url: str
    home: Path
    files: Path

    def post(self, path: str, body: object, token: str) -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, headers={"authorization": f"Bearer {token}"}, timeout=60)

    def get(self, path: str, token: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers={"authorization": f"Bearer {token}"}, timeout=60)


@pytest.fixture
def gateway(start_gateway: StartGateway, third_party: Upstream, files_root: Path, tmp_path: Path) -> Iterator[Gateway]:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    kernel = ColonyKernel(KernelSettings(home=third_party.home))
    kernel.set_trust("scribe", 0.4)
    kernel.deposit("tool:files__write_file", "failure", 30.0)  # the gate holds scribe's writes for a person
    kernel.close()
    url = start_gateway(COLONY_HOME=str(third_party.home), COLONY_GATEWAY_TOKENS_FILE=str(tokens))
    yield Gateway(url, third_party.home, files_root)


def test_http_lists_calls_holds_and_runs_an_approved_write_once(gateway: Gateway) -> None:
    catalog = gateway.get("/v1/catalog", "reader-token").json()
    names = {tool["name"] for tool in catalog["tools"]}
    assert names == {"files__read_text_file"}  # the reader sees only what it may call
    assert (
        gateway.post("/v1/tool_call", {"tool_name": "everything__get_sum", "tool_args": {}}, "reader-token").status_code
        == 403
    )

    (gateway.files / "in.txt").write_text("hello")
    read = gateway.post(
        "/v1/tool_call",
        {"tool_name": "files__read_text_file", "tool_args": {"path": str(gateway.files / "in.txt")}},
        "reader-token",
    )
    assert read.status_code == 200 and "hello" in json.dumps(read.json()["result"])

    target = gateway.files / "report.txt"
    body = {"tool_name": "files__write_file", "tool_args": {"path": str(target), "content": "figures"}}
    held = gateway.post("/v1/tool_call", {**body, **CASE}, "scribe-token")
    assert held.status_code == 202, held.text
    approval_id = held.json()["approval"]["approval_id"]
    assert not target.exists()
    decided = gateway.post(f"/v1/approvals/{approval_id}/approve", {"note": "fine"}, "ops-token")
    assert decided.status_code == 200, decided.text
    done = gateway.post("/v1/tool_call", {**body, "approval_id": approval_id}, "scribe-token")
    assert done.status_code == 200, done.text
    assert target.read_text() == "figures" and done.json()["approval"]["reviewer"] == "ops"
    target.unlink()
    replay = gateway.post("/v1/tool_call", {**body, "approval_id": approval_id}, "scribe-token")
    assert replay.status_code == 409 and not target.exists()


async def test_mcp_lists_and_calls_them_for_the_principal(gateway: Gateway) -> None:
    (gateway.files / "in.txt").write_text("over mcp")
    async with mcp_over_http(gateway.url, authorization="Bearer reader-token") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == {"files__read_text_file"}
        assert listed["files__read_text_file"].annotations.read_only_hint is True  # type: ignore[union-attr]
        answer, failed = await call(client, "files__read_text_file", {"path": str(gateway.files / "in.txt")})
        assert not failed and "over mcp" in json.dumps(answer)
        _, failed = await call(client, "everything__get_sum", {"a": 1, "b": 2})
        assert failed


def test_the_cli_calls_them_like_any_catalog_tool(third_party: Upstream, files_root: Path) -> None:
    (files_root / "in.txt").write_text("from the cli")
    env = {**os.environ, "COLONY_HOME": str(third_party.home)}
    result = subprocess.run(
        [
            str(COLONY),
            "tools",
            "call",
            "files__read_text_file",
            json.dumps({"path": str(files_root / "in.txt")}),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "from the cli" in result.stdout
