"""An agent cannot raise its own trust by reporting its own successes: through the kernel's access layer,
over the gateway's MCP with the official client, and over raw HTTP. Trust rises on what Colony ran and on
a person's word (an operator, or a kernel:approve principal reporting on another agent)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from colony.errors import AttestationError, IdentityError, KernelInputError
from colony.kernel import ColonyKernel, Decision, KernelSettings, Reporter, Role, SignalType
from colony.runtime import KernelProvider, Principal
from colony.runtime.principal import LOCAL_OPERATOR
from colony.surfaces.kernel_tools import call_kernel_tool
from tests.colony.kernel.conftest import FakeClock, clock  # noqa: F401 - fixtures
from tests.colony.surfaces.seed001 import call, mcp_over_http

SEED_CAPABILITIES = ["kernel:read", "kernel:propose", "kernel:record"]
MALLORY = Principal.of("mallory", SEED_CAPABILITIES)
CAROL = Principal.of("carol", ["kernel:read", "kernel:record", "kernel:approve"])
START = 0.1
SHELL = {
    "agent_id": "mallory",
    "action_type": "shell_exec",
    "target": "host:build-1",
    "rationale": "Rebuild the cache after the dependency update",
    "rollback_plan": "Restore the cache directory from last night's snapshot",
    "evidence": '{"tests": ["tests/test_cache.py"]}',
}


def read_docs(agent: str, round_: int) -> dict[str, Any]:
    """A made-up read-only action on a new target each round: it passes the SANDBOX role, so it EXECUTEs."""
    return {
        "agent_id": agent,
        "action_type": "read_docs",
        "target": f"docs/page-{round_}",
        "rationale": "Read the page to answer the question about the build",
        "rollback_plan": "Nothing to undo: reading changes nothing",
        "evidence": '{"tests": ["tests/test_docs.py"]}',
    }


def success(proposal: dict[str, Any], authorization: str | None) -> dict[str, Any]:
    """The attacker's report: tests passed, perfect feedback, the EXECUTE's own authorization."""
    report = {key: proposal[key] for key in ("agent_id", "action_type", "target")}
    report |= {"actual_outcome": "read it", "tests_passed": True, "human_feedback": 1.0}
    return report | ({"authorization": authorization} if authorization else {})


@pytest.fixture
def kernel(colony_home: Path, clock: FakeClock) -> Iterator[ColonyKernel]:  # noqa: F811
    instance = ColonyKernel(KernelSettings(home=colony_home, database_url=None), clock=clock)
    yield instance
    instance.close()


def tool(kernel: ColonyKernel, principal: Principal, name: str, arguments: dict[str, Any]) -> Any:
    """One colony_* call through the access layer every surface uses."""
    return call_kernel_tool(KernelProvider(kernel), name, arguments, principal)


def self_report(kernel: ColonyKernel, principal: Principal, rounds: int, first: int = 0) -> list[dict[str, Any]]:
    """The attack: propose read_docs on a new target, then report it a perfect success, ``rounds`` times."""
    records = []
    for round_ in range(first, first + rounds):
        proposal = read_docs(principal.agent_id, round_)
        verdict = tool(kernel, principal, "colony_propose_action", proposal)
        assert verdict["decision"] == "execute", verdict
        records.append(tool(kernel, principal, "colony_record_outcome", success(proposal, verdict["authorization"])))
    return records


# -- through the kernel's access layer ---------------------------------------------------------------------


def test_twenty_five_self_reported_successes_leave_the_agent_where_it_started(kernel: ColonyKernel) -> None:
    records = self_report(kernel, MALLORY, 25)
    assert {(r["trust_score"], r["role"], r["status"]) for r in records} == {(START, "sandbox", "recorded")}
    assert set(records[0]) == {"consequence_id", "trust_score", "role", "status"}  # the seed's shape
    profile = kernel.agent_profile("mallory")
    assert (profile.trust_score, profile.role, len(profile.consequence_history)) == (START, Role.SANDBOX, 25)
    assert {entry.reported_by for entry in kernel.consequence_log("mallory")} == {Reporter.AGENT}
    verdict = tool(kernel, MALLORY, "colony_propose_action", SHELL)
    assert verdict["decision"] == "refuse" and "authorization" not in verdict


def test_a_thousand_self_reported_successes_stay_at_the_starting_trust(
    kernel: ColonyKernel,
    clock: FakeClock,  # noqa: F811
) -> None:
    records = []
    for day in range(10):  # a day's budget carries a few hundred proposals
        records += self_report(kernel, MALLORY, 100, first=100 * day)
        clock.advance(kernel.settings.budget_period_seconds)
    assert len(records) == 1000
    assert max(record["trust_score"] for record in records) == START
    assert kernel.agent_profile("mallory").trust_score == START
    assert tool(kernel, MALLORY, "colony_propose_action", SHELL)["decision"] == "refuse"


def test_a_self_report_lays_no_success_trace_but_its_failure_is_laid(kernel: ColonyKernel) -> None:
    self_report(kernel, MALLORY, 1)
    assert kernel.pheromone_query("docs/page-0", SignalType.SUCCESS) == []
    assert len(kernel.pheromone_query("docs/page-0", SignalType.DEPENDENCY)) == 1
    proposal = read_docs("mallory", 1)
    verdict = tool(kernel, MALLORY, "colony_propose_action", proposal)
    failed = success(proposal, verdict["authorization"]) | {"tests_passed": False, "human_feedback": -1.0}
    assert tool(kernel, MALLORY, "colony_record_outcome", failed)["trust_score"] < START
    assert len(kernel.pheromone_query("docs/page-1", SignalType.FAILURE)) == 1


def test_after_a_self_reported_failure_successes_never_climb_back(kernel: ColonyKernel) -> None:
    proposal = read_docs("mallory", 0)
    verdict = tool(kernel, MALLORY, "colony_propose_action", proposal)
    failed = success(proposal, verdict["authorization"]) | {"tests_passed": False, "human_feedback": -1.0}
    lowered = tool(kernel, MALLORY, "colony_record_outcome", failed)["trust_score"]
    assert lowered == 0.08
    for round_ in range(1, 11):
        proposal = read_docs("mallory", round_)
        verdict = tool(kernel, MALLORY, "colony_propose_action", proposal)
        record = tool(kernel, MALLORY, "colony_record_outcome", success(proposal, verdict["authorization"]))
        assert record["trust_score"] == lowered


def test_an_agent_holding_kernel_approve_does_not_raise_itself(kernel: ColonyKernel) -> None:
    reviewer = Principal.of("carol", [*SEED_CAPABILITIES, "kernel:approve"])
    self_report(kernel, reviewer, 5)
    assert kernel.agent_profile("carol").trust_score == START


def test_a_report_without_an_authorization_is_refused(kernel: ColonyKernel) -> None:
    with pytest.raises(AttestationError, match="authorization"):
        tool(kernel, MALLORY, "colony_record_outcome", success(read_docs("mallory", 0), None))
    assert kernel.find_profile("mallory") is None


def test_another_agents_authorization_cannot_be_reported(kernel: ColonyKernel) -> None:
    victim = Principal.of("engineer-1", SEED_CAPABILITIES)
    proposal = read_docs("engineer-1", 0)
    authorization = tool(kernel, victim, "colony_propose_action", proposal)["authorization"]
    with pytest.raises(IdentityError, match="cannot act as agent 'engineer-1'"):
        tool(kernel, MALLORY, "colony_record_outcome", success(proposal, authorization))
    with pytest.raises(AttestationError):  # the token names engineer-1, not mallory
        tool(kernel, MALLORY, "colony_record_outcome", success(proposal | {"agent_id": "mallory"}, authorization))
    assert kernel.agent_profile("engineer-1").trust_score == START
    assert kernel.agent_profile("mallory").trust_score == START


def test_a_replayed_authorization_is_refused(kernel: ColonyKernel) -> None:
    proposal = read_docs("mallory", 0)
    authorization = tool(kernel, MALLORY, "colony_propose_action", proposal)["authorization"]
    tool(kernel, MALLORY, "colony_record_outcome", success(proposal, authorization))
    for _ in range(3):
        with pytest.raises(AttestationError):
            tool(kernel, MALLORY, "colony_record_outcome", success(proposal, authorization))
    assert len(kernel.consequence_log("mallory")) == 1


def test_who_vouches_is_never_an_argument(kernel: ColonyKernel) -> None:
    proposal = read_docs("mallory", 0)
    authorization = tool(kernel, MALLORY, "colony_propose_action", proposal)["authorization"]
    for claim in ("runtime", "person"):
        with pytest.raises(KernelInputError, match="reported_by: unknown argument"):
            tool(kernel, MALLORY, "colony_record_outcome", success(proposal, authorization) | {"reported_by": claim})
    assert kernel.agent_profile("mallory").trust_score == START


def test_an_operators_report_keeps_the_seeds_numbers(kernel: ColonyKernel) -> None:
    proposal = read_docs("engineer-1", 0)
    record = tool(kernel, LOCAL_OPERATOR, "colony_record_outcome", success(proposal, None))
    assert (record["trust_score"], record["role"]) == (0.173, "sandbox")  # seed 001
    [entry] = kernel.consequence_log("engineer-1")
    assert entry.reported_by is Reporter.PERSON
    assert kernel.pheromone_query("docs/page-0", SignalType.SUCCESS)


def test_a_reviewer_raises_another_agent(kernel: ColonyKernel) -> None:
    proposal = read_docs("engineer-1", 0)
    record = tool(kernel, CAROL, "colony_record_outcome", success(proposal, None))
    assert record["trust_score"] == 0.173
    assert [entry.reported_by for entry in kernel.consequence_log("engineer-1")] == [Reporter.PERSON]
    assert kernel.find_profile("carol") is None  # the reviewer's own trust is not touched


def test_what_colony_ran_itself_raises_trust(kernel: ColonyKernel) -> None:
    proposal = read_docs("engineer-1", 0)
    verdict = kernel.propose_action(proposal)
    report = success(proposal, None) | {"human_feedback": 0.0}
    record = kernel.record_outcome(report, verdict.authorization, reported_by=Reporter.RUNTIME)
    assert record.trust_score > START and record.attested
    assert kernel.consequence_log("engineer-1")[0].reported_by is Reporter.RUNTIME


def test_an_unknown_reporter_is_an_error_naming_it(kernel: ColonyKernel) -> None:
    with pytest.raises(KernelInputError, match="reported_by") as raised:
        kernel.record_outcome(success(read_docs("engineer-1", 0), None), reported_by="ceo")  # type: ignore[arg-type]
    assert raised.value.errors[0].field == "reported_by"
    assert kernel.find_profile("engineer-1") is None


# -- over the gateway --------------------------------------------------------------------------------------


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_mcp_self_reports_over_the_gateway_leave_trust_at_the_start(secured: tuple[str, Path]) -> None:
    url, _ = secured
    async with mcp_over_http(url, **_bearer("mallory-token")) as client:
        for round_ in range(25):
            proposal = read_docs("mallory", round_)
            verdict, failed = await call(client, "colony_propose_action", proposal)
            assert (verdict["decision"], failed) == ("execute", False)
            record, failed = await call(client, "colony_record_outcome", success(proposal, verdict["authorization"]))
            assert (record["trust_score"], record["role"], failed) == (START, "sandbox", False)
        profile, _ = await call(client, "colony_agent_profile", {"agent_id": "mallory"})
        assert (profile["trust_score"], profile["role"]) == (START, "sandbox")
        verdict, _ = await call(client, "colony_propose_action", SHELL)
        assert verdict["decision"] == "refuse"
        answer, failed = await call(client, "colony_record_outcome", success(read_docs("mallory", 99), None))
        assert failed and "authorization" in answer["error"]


async def test_mcp_a_reviewer_over_the_gateway_raises_another_agent(secured: tuple[str, Path]) -> None:
    url, _ = secured
    async with mcp_over_http(url, **_bearer("reviewer-token")) as client:
        record, failed = await call(client, "colony_record_outcome", success(read_docs("trainee", 0), None))
        assert (record["trust_score"], failed) == (0.173, False)
        record, failed = await call(client, "colony_record_outcome", success(read_docs("reviewer", 0), None))
        assert failed and "authorization" in record["error"]  # on itself a reviewer is an agent like any other


def _rpc(url: str, token: str, name: str, arguments: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = httpx.post(f"{url}/mcp", json=body, headers=_bearer(token), timeout=30)
    assert response.status_code == 200, response.text
    return json.loads(response.json()["result"]["content"][0]["text"])


def test_http_self_reports_leave_trust_at_the_start(secured: tuple[str, Path]) -> None:
    url, _ = secured
    for round_ in range(25):
        proposal = read_docs("mallory-http", round_)
        verdict = _rpc(url, "mallory-http-token", "colony_propose_action", proposal)
        assert verdict["decision"] == Decision.EXECUTE.value
        forged = success(proposal, verdict["authorization"]) | {"reported_by": "runtime"}
        refused = _rpc(url, "mallory-http-token", "colony_record_outcome", forged)
        assert "reported_by: unknown argument" in refused["error"]
        record = _rpc(url, "mallory-http-token", "colony_record_outcome", success(proposal, verdict["authorization"]))
        assert record["trust_score"] == START
    shell = SHELL | {"agent_id": "mallory-http"}
    assert _rpc(url, "mallory-http-token", "colony_propose_action", shell)["decision"] == "refuse"
    # nor is the kernel reachable as a catalog tool
    body = {"tool_name": "colony_record_outcome", "tool_args": success(read_docs("mallory-http", 0), None)}
    response = httpx.post(f"{url}/v1/tool_call", json=body, headers=_bearer("mallory-http-token"), timeout=30)
    assert response.status_code >= 400
    assert _rpc(url, "mallory-http-token", "colony_agent_profile", {"agent_id": "mallory-http"})["trust_score"] == START
