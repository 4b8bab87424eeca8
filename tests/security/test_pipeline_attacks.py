"""Attacks on the one pipeline: every surface fails closed.

A side-effecting tool never runs without the gate; only catalog names resolve;
identity comes from authentication, never from a header, an argument or the
environment; an agent cannot raise its own trust with reports the gate never
authorized; a limited token cannot reach the kernel; a declared secret is needed
everywhere; ``tool_approval: required`` holds a call for a person.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from colony.agents import AgentSpec, assemble
from colony.cli import app
from colony.errors import ActionNotExecutedError, IdentityError, ToolInputError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import CallStatus, Catalog, Runtime
from colony.surfaces import UnifiedToolClient
from tests.colony.surfaces.seed001 import call, mcp_over_http
from tests.security.conftest import CASE

COLONY = str(Path(sys.executable).parent / "colony")
REPO_ROOT = Path(__file__).resolve().parents[2]
NOTE = {"note": "calibration ok"}


def post(url: str, body: dict[str, Any], token: str | None = None, **headers: str) -> httpx.Response:
    if token:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(f"{url}/v1/tool_call", json=body, headers=headers, timeout=30)


def notes(home: Path) -> list[str]:
    path = home / "notes.txt"
    return path.read_text().splitlines() if path.exists() else []


def kernel_at(home: Path) -> ColonyKernel:
    return ColonyKernel(KernelSettings(home=home))


# -- HTTP ------------------------------------------------------------------------------------------


def test_http_a_side_effecting_call_without_its_case_or_trust_never_runs(secured: tuple[str, Path]) -> None:
    url, home = secured
    bare = post(url, {"tool_name": "append_note", "tool_args": NOTE}, "agent-token")
    assert bare.status_code == 400 and bare.json()["error"]["errors"][0]["field"] == "rationale"
    refused = post(url, {"tool_name": "append_note", "tool_args": NOTE, **CASE}, "agent-token")
    assert refused.status_code == 409 and refused.json()["error"]["verdict"]["decision"] == "refuse"
    assert notes(home) == []


@pytest.mark.parametrize("name", ["this.Anything", "tests.colony.surfaces.sample_tools.AppendNote", "os.system"])
def test_http_a_caller_named_path_is_never_imported(secured: tuple[str, Path], name: str) -> None:
    url, _ = secured
    response = post(url, {"tool_name": name, "tool_args": {}}, "ops-token")
    assert response.status_code == 404 and "unknown tool" in response.json()["error"]["message"]


def test_http_identity_comes_from_the_token_not_the_header(secured: tuple[str, Path]) -> None:
    url, home = secured
    spoofed = post(
        url, {"tool_name": "append_note", "tool_args": NOTE, **CASE}, "agent-token", **{"x-colony-agent": "ops"}
    )
    assert spoofed.status_code == 403 and spoofed.json()["error"]["type"] == "IdentityError"
    on_behalf = post(
        url, {"tool_name": "append_note", "tool_args": NOTE, **CASE}, "ops-token", **{"x-colony-agent": "intern"}
    )
    assert on_behalf.status_code == 409  # an operator may act for an agent, who is then judged: SANDBOX
    [consequence] = [c for c in kernel_at(home).consequence_log("intern")] or [None]
    assert consequence is None  # a refusal runs nothing and records no outcome
    assert notes(home) == []


def test_http_a_token_calls_only_what_it_grants_and_sees_only_that(secured: tuple[str, Path]) -> None:
    url, _ = secured
    denied = post(url, {"tool_name": "append_note", "tool_args": NOTE, **CASE}, "convert-token")
    assert denied.status_code == 403 and denied.json()["error"]["missing"] == ["tool:append_note"]
    catalog = httpx.get(f"{url}/v1/catalog", headers={"authorization": "Bearer convert-token"}, timeout=10).json()
    assert [tool["name"] for tool in catalog["tools"]] == ["unit_convert"]


def test_http_a_declared_secret_is_required(secured: tuple[str, Path]) -> None:
    url, _ = secured
    response = post(url, {"tool_name": "secret_double", "tool_args": {}}, "agent-token")
    assert response.status_code == 503 and "COLONY_SECRET_DOUBLE_TOKEN" in response.json()["error"]["message"]


# -- the kernel over /mcp --------------------------------------------------------------------------

REPORT = {
    "agent_id": "engineer-1",
    "action_type": "append_note",
    "target": "tool:append_note",
    "actual_outcome": "all good",
    "tests_passed": True,
    "human_feedback": 1.0,
}


async def test_mcp_a_limited_token_cannot_reach_the_kernel(secured: tuple[str, Path]) -> None:
    url, _ = secured
    async with mcp_over_http(url, authorization="Bearer convert-token") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"unit_convert"}
        answer, failed = await call(client, "colony_record_outcome", REPORT)
        assert failed and "kernel:record" in answer["error"]
        answer, failed = await call(client, "colony_status", {})
        assert failed and "kernel:read" in answer["error"]


async def test_mcp_unattested_reports_cannot_inflate_trust(secured: tuple[str, Path]) -> None:
    url, home = secured
    async with mcp_over_http(url, authorization="Bearer recorder-token") as client:
        for _ in range(4):
            answer, failed = await call(client, "colony_record_outcome", REPORT)
            assert failed and "authorization" in answer["error"]
        answer, failed = await call(client, "colony_record_outcome", {**REPORT, "agent_id": "victim"})
        assert failed and "cannot act as agent 'victim'" in answer["error"]
        profile, _ = await call(client, "colony_agent_profile", {"agent_id": "engineer-1"})
        assert profile["trust_score"] == 0.1 and profile["role"] == "sandbox"
    refused = post(url, {"tool_name": "append_note", "tool_args": NOTE, **CASE}, "agent-token")
    assert refused.status_code == 409
    assert notes(home) == []


async def test_mcp_an_agent_proposes_only_as_itself(secured: tuple[str, Path]) -> None:
    url, _ = secured
    proposal = {"agent_id": "ops", "action_type": "patch_file", "target": "pkg.mod", "rationale": "x" * 30,
                "rollback_plan": "revert"}  # fmt: skip
    async with mcp_over_http(url, authorization="Bearer agent-token") as client:
        answer, failed = await call(client, "colony_propose_action", proposal)
        assert failed and "cannot act as agent 'ops'" in answer["error"]
        answer, failed = await call(client, "append_note", {**NOTE, "agent_id": "ops", **CASE})
        assert failed and "agent_id" in answer["error"]  # an argument, not an identity: refused as such


# -- stdio MCP, the CLI, the client, agents, flows -------------------------------------------------


async def test_stdio_identity_is_not_taken_from_the_environment(attack_repo: Path, tmp_path: Path) -> None:
    env = {**os.environ, "COLONY_HOME": str(tmp_path), "COLONY_REPO_ROOT": str(attack_repo),
           "COLONY_AGENT_ID": "ops", "PYTHONPATH": str(REPO_ROOT)}  # fmt: skip
    kernel_at(tmp_path).set_trust("ops", 0.95)
    async with Client(StdioServerParameters(command=COLONY, args=["mcp"], env=env)) as client:
        answer, failed = await call(client, "append_note", {**NOTE, **CASE})
        assert failed and answer["verdict"]["decision"] == "refuse"  # judged as local-operator, not 'ops'
    assert notes(tmp_path) == []


def test_cli_a_side_effecting_call_needs_its_case_and_passes_the_gate(
    attack_repo: Path, colony_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(attack_repo))
    runner = CliRunner()
    bare = runner.invoke(app, ["tools", "call", "append_note", json.dumps(NOTE)])
    assert bare.exit_code == 1 and "rationale" in bare.stderr
    refused = runner.invoke(
        app,
        ["tools", "call", "append_note", json.dumps(NOTE), "--agent", "newcomer", "--rationale", CASE["rationale"],
         "--rollback-plan", CASE["rollback_plan"], "--json"],
    )  # fmt: skip
    assert refused.exit_code == 1 and json.loads(refused.stdout)["error"]["verdict"]["decision"] == "refuse"
    imported = runner.invoke(app, ["tools", "call", "tests.colony.surfaces.sample_tools.AppendNote", json.dumps(NOTE)])
    assert imported.exit_code == 1 and "unknown tool" in imported.stderr
    assert notes(colony_home) == []
    kernel_at(colony_home).set_trust("trusted", 0.9)
    executed = runner.invoke(
        app,
        ["tools", "call", "append_note", json.dumps(NOTE), "--agent", "trusted", "--rationale", CASE["rationale"],
         "--rollback-plan", CASE["rollback_plan"], "--evidence", json.dumps(CASE["evidence"]), "--json"],
    )  # fmt: skip
    assert executed.exit_code == 0, executed.output
    assert json.loads(executed.stdout)["verdict"]["decision"] == "execute"
    assert notes(colony_home) == ["calibration ok"]
    [consequence] = kernel_at(colony_home).consequence_log("trusted")
    assert consequence.proposal_id is not None and "(by operator local-operator)" in consequence.actual_outcome


async def test_client_local_and_remote_fail_closed(
    attack_repo: Path, secured: tuple[str, Path], colony_home: Path
) -> None:
    runtime = Runtime(Catalog(attack_repo / ".colony" / "tool-registry.json"))
    client = UnifiedToolClient(agent_id="newcomer", runtime=runtime)
    with pytest.raises(ActionNotExecutedError) as refused:
        await client.acall_tool_local("append_note", NOTE, **CASE)
    assert refused.value.verdict["decision"] == "refuse"
    with pytest.raises(ToolInputError, match="rationale"):
        await client.acall_tool_local("append_note", NOTE)
    await client.aclose()
    url, home = secured
    spoofing = UnifiedToolClient(agent_id="ops", token="agent-token")
    with pytest.raises(IdentityError):
        await spoofing.acall_tool_remote(http_url=url, tool_name="append_note", tool_args=NOTE, **CASE)
    assert notes(colony_home) == [] and notes(home) == []


async def test_agent_calls_pass_the_gate_and_approval_holds(attack_repo: Path, colony_home: Path) -> None:
    runtime = Runtime(Catalog(attack_repo / ".colony" / "tool-registry.json"))
    spec = AgentSpec(
        name="clerk",
        capabilities=("append_note", "unit_convert"),
        tool_approval={"tool:unit_convert.convert_units": "required"},
    )
    agent = assemble(spec, runtime)
    with pytest.raises(ActionNotExecutedError):
        await agent.call("append_note", NOTE, **CASE)  # a SANDBOX agent
    kernel_at(colony_home).set_trust("clerk", 0.9)
    held = await agent.outcome("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"}, **CASE)
    assert held.status is CallStatus.HELD and held.result is None  # no person has approved it
    assert "human_approval" in (held.verdict or {})["required_evidence"]
    with pytest.raises(ActionNotExecutedError, match="held"):
        held.raise_for_status()
    await agent.shutdown()
    assert notes(colony_home) == []
