"""Attacks on the audit trail through a real ``colony gateway``: refusals are recorded, not amplified, not forged.

The gateway runs in its own process with tokens bound to principals and a tight rate
limit; it is stopped (SIGTERM: its runtime flushes the last second's refusals) before
the kernel database under its COLONY_HOME is read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from colony.kernel import AuditEntry, ColonyKernel, KernelSettings
from tests.colony.surfaces.seed001 import call
from tests.security.conftest import CASE, TOKENS
from tests.services import free_port
from tests.services.gateway import start_gateway_process

LIMITS = {"tools": {"unit_convert": {"rate": 0.01, "burst": 3}}}  # no token comes back during the test
CONVERT = {"value": 1, "from_unit": "km", "to_unit": "m"}
FLOOD = 300
ROTATIONS = 180  # under the default burst of one tool (200): every one is a 403, none a 429
REPO = Path(__file__).resolve().parents[2]
COLONY = str(Path(sys.executable).parent / "colony")


class Gateway:
    def __init__(self, url: str, home: Path, process: subprocess.Popen[bytes]) -> None:
        self.url, self.home, self.process = url, home, process

    def call(self, token: str | None, body: dict[str, object], **headers: str) -> httpx.Response:
        if token:
            headers["authorization"] = f"Bearer {token}"
        return httpx.post(f"{self.url}/v1/tool_call", json=body, headers=headers, timeout=30)

    def mcp(self, token: str | None, name: str, arguments: dict[str, object]) -> httpx.Response:
        headers = {"accept": "application/json, text/event-stream"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        return httpx.post(f"{self.url}/mcp", json=body, headers=headers, timeout=30)

    def stopped_log(self) -> list[AuditEntry]:
        """Stop the gateway (it flushes on the way out), then read its kernel's audit log."""
        self.process.terminate()
        self.process.wait(timeout=30)
        kernel = ColonyKernel(KernelSettings(home=self.home, database_url=None))
        try:
            check = kernel.verify_audit()
            assert check.ok, check.problem
            return list(kernel.audit_entries())
        finally:
            kernel.close()


@pytest.fixture
def gateway(attack_repo: Path, tmp_path: Path) -> Iterator[Gateway]:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    home = tmp_path / "home"
    port = free_port()
    env = {
        "COLONY_HOME": str(home),
        "COLONY_REPO_ROOT": str(attack_repo),
        "COLONY_GATEWAY_TOKENS_FILE": str(tokens),
        "COLONY_GATEWAY_RATE_LIMITS": json.dumps(LIMITS),
    }
    process = start_gateway_process(env, port)
    yield Gateway(f"http://127.0.0.1:{port}", home, process)
    if process.poll() is None:
        process.kill()
        process.wait()
    if process.stderr:
        process.stderr.close()


def refusals(log: list[AuditEntry], verdict: str) -> list[AuditEntry]:
    return [entry for entry in log if entry.event == "refused" and entry.verdict == verdict]


def test_401_403_and_429_are_recorded_with_who_and_for_whom(gateway: Gateway) -> None:
    convert = {"tool_name": "unit_convert", "tool_args": CONVERT}
    assert gateway.call(None, convert).status_code == 401
    assert gateway.call("stolen-token", convert).status_code == 401
    assert gateway.mcp(None, "unit_convert", CONVERT).status_code == 401
    note = {"tool_name": "append_note", "tool_args": {"note": "x"}, **CASE}
    assert gateway.call("convert-token", note).status_code == 403  # converter lacks tool:append_note
    assert gateway.call("agent-token", convert, **{"x-colony-agent": "ops"}).status_code == 403  # not an operator
    denied = gateway.mcp("convert-token", "append_note", {"note": "x", **CASE})
    assert denied.status_code == 200 and denied.json()["result"]["isError"]
    assert gateway.mcp("convert-token", "colony_status", {}).json()["result"]["isError"]  # lacks kernel:read
    for _ in range(3):
        assert gateway.call("convert-token", convert).status_code == 200  # the burst
    assert gateway.call("convert-token", convert).status_code == 429
    assert gateway.mcp("convert-token", "unit_convert", CONVERT).status_code == 429

    log = gateway.stopped_log()
    unauthenticated = refusals(log, "unauthenticated")
    assert [(e.who, e.what, e.detail["client"]) for e in unauthenticated] == [
        ("anonymous", "POST /v1/tool_call", "127.0.0.1"),  # the first of its kind, as it was
        ("anonymous", "POST *", "127.0.0.1"),  # the rest of the window, with what they asked for
    ]
    assert unauthenticated[1].detail["names"]["what"] == ["POST /mcp", "POST /v1/tool_call"]
    assert sum(e.detail["count"] for e in unauthenticated) == 3
    forbidden = {(e.who, e.on_behalf, e.what) for e in refusals(log, "forbidden")}
    assert forbidden == {
        ("converter", "converter", "call append_note"),
        ("engineer-1", "ops", "call unit_convert"),
        ("converter", "converter", "mcp colony_status"),
    }
    assert sum(e.detail["count"] for e in refusals(log, "forbidden")) == 4  # append_note twice: HTTP and MCP
    limited = refusals(log, "rate_limited")
    assert {(e.who, e.what) for e in limited} == {("converter", "call unit_convert")}
    assert sum(e.detail["count"] for e in limited) == 2


def test_a_forwarded_for_header_cannot_put_another_address_in_the_log(gateway: Gateway) -> None:
    """No proxy is trusted unless the operator names it (COLONY_GATEWAY_TRUSTED_PROXIES), loopback included."""
    convert = {"tool_name": "unit_convert", "tool_args": CONVERT}
    forged = {"x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https"}
    assert gateway.call(None, convert, **forged).status_code == 401
    clients = {entry.detail["client"] for entry in refusals(gateway.stopped_log(), "unauthenticated")}
    assert clients == {"127.0.0.1"}


def test_hammering_a_limit_writes_one_entry_a_second_not_one_a_request(gateway: Gateway) -> None:
    convert = {"tool_name": "unit_convert", "tool_args": CONVERT}
    with httpx.Client(headers={"authorization": "Bearer convert-token"}, timeout=30) as client:
        statuses = [client.post(f"{gateway.url}/v1/tool_call", json=convert).status_code for _ in range(FLOOD + 3)]
        statuses += [
            client.post(f"{gateway.url}/v1/tool_call", json=convert, headers={"authorization": "Bearer x"}).status_code
            for _ in range(FLOOD)
        ]
    assert statuses.count(429) == FLOOD and statuses.count(401) == FLOOD
    log = gateway.stopped_log()
    for verdict in ("rate_limited", "unauthenticated"):
        entries = refusals(log, verdict)
        assert sum(e.detail["count"] for e in entries) == FLOOD  # every refusal counted
        span = max(e.detail["last_at"] for e in entries) - min(e.detail["first_at"] for e in entries)
        assert len(entries) <= span + 3  # at most one write a second (and the tail flushed on the way out)


def test_rotating_claimed_agents_and_paths_costs_a_few_entries_not_one_each(gateway: Gateway) -> None:
    """A caller changing the agent it claims (403) or the path it asks for (401) on every request."""
    note = {"tool_name": "append_note", "tool_args": {"note": "x"}, **CASE}
    with httpx.Client(timeout=30) as client:
        forbidden = [
            client.post(
                f"{gateway.url}/v1/tool_call",
                json=note,
                headers={"authorization": "Bearer agent-token", "x-colony-agent": f"agent-{index}"},
            ).status_code
            for index in range(ROTATIONS)
        ]
        unauthenticated = [
            client.get(f"{gateway.url}/v1/approvals/guess-{index}").status_code for index in range(ROTATIONS)
        ]
    assert set(forbidden) == {403} and set(unauthenticated) == {401}
    log = gateway.stopped_log()
    for verdict, first, what in (
        ("forbidden", ("engineer-1", "agent-0", "call append_note"), "call append_note"),
        ("unauthenticated", ("anonymous", "anonymous", "GET /v1/approvals/guess-0"), "GET *"),
    ):
        entries = refusals(log, verdict)
        assert sum(e.detail["count"] for e in entries) == ROTATIONS  # every refusal counted
        assert (entries[0].who, entries[0].on_behalf, entries[0].what) == first  # the first of its kind, as it was
        assert entries[0].detail["count"] == 1
        span = max(e.detail["last_at"] for e in entries) - min(e.detail["first_at"] for e in entries)
        assert len(entries) <= 2 * (1 + span // 60)  # the first and one count per minute's window
        assert all(e.what in (first[2], what) for e in entries[1:])


def test_who_acted_cannot_be_forged_by_the_caller(gateway: Gateway) -> None:
    forged = {**CASE, "evidence": {"acted_by": "ops"}}
    note = {"tool_name": "append_note", "tool_args": {"note": "x"}, **forged}
    assert gateway.call("agent-token", note).status_code in (200, 202, 409)
    proposal = {
        "agent_id": "engineer-1",
        "action_type": "patch_file",
        "target": "pkg.mod",
        "rationale": CASE["rationale"],
        "rollback_plan": CASE["rollback_plan"],
        "acted_by": "ops",
    }
    refused = gateway.mcp("agent-token", "colony_propose_action", proposal)
    assert "acted_by: unknown argument" in refused.json()["result"]["content"][0]["text"]
    del proposal["acted_by"]
    assert (
        "decision"
        in gateway.mcp("agent-token", "colony_propose_action", proposal).json()["result"]["content"][0]["text"]
    )
    acted = gateway.call("ops-token", note, **{"x-colony-agent": "engineer-1"})
    assert acted.status_code in (200, 202, 409)
    assert (
        "decision" in gateway.mcp("ops-token", "colony_propose_action", proposal).json()["result"]["content"][0]["text"]
    )

    gates = [entry for entry in gateway.stopped_log() if entry.event == "propose"]
    assert [(e.who, e.on_behalf) for e in gates] == [
        ("engineer-1", "engineer-1"),  # the evidence's acted_by is only evidence
        ("engineer-1", "engineer-1"),
        ("ops", "engineer-1"),  # an operator acting for the agent is named by its authentication
        ("ops", "engineer-1"),
    ]


def test_approval_decisions_over_http_name_the_principal_not_the_reviewer_it_typed(gateway: Gateway) -> None:
    kernel = ColonyKernel(KernelSettings(home=gateway.home, database_url=None))
    kernel.set_trust("engineer-1", 0.4)
    kernel.deposit("tool:append_note", "failure", 30.0)  # the gate holds engineer-1's notes for a person
    kernel.close()
    note = {"tool_name": "append_note", "tool_args": {"note": "x"}, **CASE}
    first, second = (gateway.call("agent-token", note) for _ in range(2))
    assert first.status_code == second.status_code == 202
    approve, reject = (answer.json()["approval"]["approval_id"] for answer in (first, second))

    def decide(token: str, approval_id: str, verb: str, **body: str) -> httpx.Response:
        url = f"{gateway.url}/v1/approvals/{approval_id}/{verb}"
        return httpx.post(url, json=body, headers={"authorization": f"Bearer {token}"}, timeout=30)

    assert decide("agent-token", approve, "approve").status_code == 403  # never one's own request
    assert decide("ops-token", approve, "approve", reviewer="ceo@example.org").status_code == 422  # no such field
    assert decide("ops-token", approve, "approve", display_name="ceo@example.org").status_code == 200
    assert decide("ops-token", reject, "reject", note="not tonight").status_code == 200
    assert gateway.call("agent-token", {**note, "approval_id": approve}).status_code == 200  # runs once

    log = gateway.stopped_log()
    decisions = [(e.event, e.who, e.on_behalf, e.verdict) for e in log if e.event != "refused"]
    assert decisions == [
        ("propose", "engineer-1", "engineer-1", "hold"),
        ("propose", "engineer-1", "engineer-1", "hold"),
        ("approve", "ops", "engineer-1", "approved"),
        ("reject", "ops", "engineer-1", "rejected"),
        ("claim", "engineer-1", "engineer-1", "claimed"),
    ]
    approved = next(e for e in log if e.event == "approve")
    assert approved.detail["display_name"] == "ceo@example.org" and approved.detail["approval_id"] == approve
    [own] = refusals(log, "forbidden")
    assert (own.who, own.on_behalf, own.what) == ("engineer-1", "engineer-1", f"approve approval {approve}")


async def test_stdio_mcp_records_its_decisions_and_an_identity_refusal(attack_repo: Path, tmp_path: Path) -> None:
    kernel = ColonyKernel(KernelSettings(home=tmp_path, database_url=None))
    kernel.set_trust("engineer-1", 0.6)
    held = kernel.propose_action(
        {
            "agent_id": "engineer-1",
            "action_type": "append_note",
            "target": "tool:append_note",
            "rationale": CASE["rationale"],
            "rollback_plan": CASE["rollback_plan"],
            "tool": "append_note",
            "require_approval": True,
        }
    )
    assert held.approval_id
    env = {**os.environ, "COLONY_HOME": str(tmp_path), "COLONY_REPO_ROOT": str(attack_repo), "PYTHONPATH": str(REPO)}
    server = StdioServerParameters(command=COLONY, args=["mcp", "--agent", "engineer-2"], env=env)
    async with Client(server) as client:
        answer, failed = await call(client, "append_note", {"note": "x", "approval_id": held.approval_id, **CASE})
        assert failed and answer["type"] == "IdentityError"  # engineer-1's approval is not engineer-2's
        decided, failed = await call(
            client, "colony_decide_approval", {"approval_id": held.approval_id, "approve": False, "note": "no"}
        )
        assert not failed and decided["approval"]["state"] == "rejected"
    log = list(kernel.audit_entries())
    assert kernel.verify_audit().ok
    kernel.close()
    assert [(e.event, e.who, e.on_behalf, e.verdict) for e in log] == [
        ("propose", "engineer-1", "engineer-1", "hold"),
        ("refused", "local-operator", "engineer-2", "forbidden"),
        ("reject", "local-operator", "engineer-1", "rejected"),
    ]


def test_a_hostile_name_in_a_refused_call_cannot_jam_the_log(gateway: Gateway) -> None:
    hostile = "ops\u0000" + "x" * 5000  # NUL (no database stores it) and far over any column
    proposal = {"agent_id": hostile, "action_type": "patch_file", "target": "pkg.mod", "rationale": "r" * 30}
    refused = gateway.mcp("agent-token", "colony_propose_action", {**proposal, "rollback_plan": "revert"})
    assert "IdentityError" in refused.json()["result"]["content"][0]["text"]
    convert = {"tool_name": "unit_convert", "tool_args": CONVERT}
    assert gateway.call("agent-token", convert, **{"x-colony-agent": "y" * 5000}).status_code == 403
    log = refusals(gateway.stopped_log(), "forbidden")
    assert [(e.who, e.on_behalf[:5], len(e.on_behalf), e.what) for e in log] == [
        ("engineer-1", "ops\\0", 256, "mcp colony_propose_action"),
        ("engineer-1", "yyyyy", 256, "call unit_convert"),
    ]
