"""Attacks on the kernel that must fail closed: lowering a proposal's risk, draining the budget, NUL bytes,
inflated counters, and `rm -rf /` spelled to slip past the plan check. In process and over MCP."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from colony.errors import AttestationError, KernelInputError
from colony.kernel import ColonyKernel, Decision, KernelSettings
from colony.runtime import KernelProvider, Principal
from colony.runtime.principal import LOCAL_OPERATOR
from colony.surfaces.kernel_tools import run_kernel_tool
from tests.colony.kernel.conftest import FakeClock, clock, database_url, good_plan  # noqa: F401 - fixtures

REPO_ROOT = Path(__file__).resolve().parents[2]
COLONY = str(Path(sys.executable).parent / "colony")
DESTRUCTIVE_PLAN = {
    "agent_id": "newcomer",
    "action_type": "drop_table",
    "target": "db.customers",
    "rationale": "The table is unused and costs storage every day",
    "rollback_plan": "",
    "evidence": "{}",
}
HARMLESS_LOOKING = [
    "query_and_drop_table",
    "queryAndDropTable",
    "get_then_delete_rows",
    "read.and.truncate",
    "list-files-rm",
    "view overwrite settings",
    "status_wipe",
    "check_and_purge",
]


@pytest.fixture
def shared(database_url: str, clock: FakeClock) -> Iterator[ColonyKernel]:  # noqa: F811
    # one agent may hold the whole period here; test_budget_attacks.py weighs the per-agent share
    settings = KernelSettings(database_url=database_url, budget_llm_calls=10, agent_budget_share=1.0)
    kernel = ColonyKernel(settings, clock=clock)
    yield kernel
    kernel.close()


AGENT = Principal.of("engineer-1", ["kernel:read", "kernel:propose", "kernel:record"])


def _mcp(kernel: ColonyKernel, name: str, arguments: dict[str, Any], principal: Principal = LOCAL_OPERATOR) -> Any:
    return run_kernel_tool(KernelProvider(kernel), name, arguments, principal)


# -- the caller cannot lower the risk of its own proposal ------------------------------------------------


def test_side_effecting_false_in_process_does_not_pass_a_sandbox_agent(shared: ColonyKernel) -> None:
    verdict = shared.propose_action({**DESTRUCTIVE_PLAN, "side_effecting": False})
    assert (verdict.decision, verdict.reason) == (Decision.REFUSE, "SANDBOX role: no write-path gate passes")
    assert verdict.authorization is None


def test_a_declared_read_only_kind_does_not_pass_either(shared: ColonyKernel) -> None:
    verdict = shared.propose_action({**DESTRUCTIVE_PLAN, "kind": "read_only", "side_effecting": False})
    assert verdict.decision is Decision.REFUSE and verdict.authorization is None


@pytest.mark.parametrize("extension", [{"side_effecting": False}, {"kind": "read_only"}, {"budget_estimate": {}}])
def test_in_process_extensions_are_refused_over_mcp(shared: ColonyKernel, extension: dict[str, Any]) -> None:
    answer = _mcp(shared, "colony_propose_action", {**DESTRUCTIVE_PLAN, **extension})
    [key] = extension
    assert set(answer) == {"error"}
    assert f"{key}: unknown argument" in answer["error"]
    assert shared.find_profile("newcomer") is None  # the kernel never saw it


@pytest.mark.parametrize("action_type", HARMLESS_LOOKING)
def test_harmless_looking_names_do_not_pass_a_sandbox_agent(shared: ColonyKernel, action_type: str) -> None:
    verdict = shared.propose_action({**DESTRUCTIVE_PLAN, "action_type": action_type})
    assert verdict.decision is Decision.REFUSE and verdict.authorization is None
    # and a trusted agent gets the destructive rules (no rollback, no scope: never a straight EXECUTE)
    shared.set_trust("trusted", 0.9)
    plan = {**DESTRUCTIVE_PLAN, "agent_id": "trusted", "action_type": action_type, "evidence": '{"tests": ["t"]}'}
    trusted = shared.propose_action(plan)
    assert trusted.decision is not Decision.EXECUTE
    assert {"resolve_no_rollback", "resolve_scope_creep"} <= set(trusted.required_evidence)


async def test_side_effecting_false_over_the_official_mcp_client(colony_home: Path) -> None:
    environment = {**os.environ, "COLONY_HOME": str(colony_home), "PYTHONPATH": str(REPO_ROOT)}
    server = StdioServerParameters(command=COLONY, args=["mcp"], env=environment)
    async with Client(server) as client:
        result = await client.call_tool("colony_propose_action", {**DESTRUCTIVE_PLAN, "side_effecting": False})
        answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert result.is_error and "side_effecting: unknown argument" in answer["error"]
        result = await client.call_tool("colony_propose_action", DESTRUCTIVE_PLAN)
        assert json.loads(result.content[0].text)["decision"] == "refuse"  # type: ignore[union-attr]


# -- the budget cannot be drained -------------------------------------------------------------------------


def test_honest_mcp_cycles_leave_nothing_reserved(shared: ColonyKernel) -> None:
    shared.set_trust("engineer-1", 0.3)
    proposal = {
        "agent_id": "engineer-1",
        "action_type": "patch_file",
        "target": "pkg.parser",
        "rationale": "Fix the off-by-one error in the branch name parser",
        "rollback_plan": "git revert the commit",
        "evidence": '{"tests": ["tests/test_parser.py"]}',
    }
    report = {**{k: proposal[k] for k in ("agent_id", "action_type", "target")}, "actual_outcome": "ok",
              "tests_passed": True}  # fmt: skip
    for cycle in range(10):  # the default estimate is 1 LLM call; the period allows 10
        verdict = _mcp(shared, "colony_propose_action", proposal, AGENT)
        assert verdict["decision"] == "execute", (cycle, verdict)
        if cycle % 2:  # the agent reports with the verdict's authorization
            recorded = _mcp(
                shared, "colony_record_outcome", {**report, "authorization": verdict["authorization"]}, AGENT
            )
        else:  # an operator reports without it: matched to the agent's open reservation
            recorded = _mcp(shared, "colony_record_outcome", report)
        assert recorded["status"] == "recorded", recorded
    # every reservation was settled by its report: the budget shows use, not holds leaked forever
    usage = shared.status().budget_usage["llm_calls"]
    assert (usage.used, usage.reserved) == (10, 0)
    assert all(record.proposal_id for record in shared.consequence_log("engineer-1"))


def test_a_crashed_holder_does_not_keep_the_budget(shared: ColonyKernel, clock: FakeClock) -> None:  # noqa: F811
    shared.set_trust("engineer-1", 0.3)
    plan = {**DESTRUCTIVE_PLAN, "agent_id": "engineer-1", "action_type": "patch_file", "target": "pkg.a",
            "rollback_plan": "git revert", "evidence": '{"tests": ["t"]}',
            "budget_estimate": {"llm_calls": 10, "runtime_seconds": 1}}  # fmt: skip
    assert shared.propose_action(plan).decision is Decision.EXECUTE  # and its process dies here
    assert shared.propose_action(plan).budget_approved is False
    clock.advance(shared.settings.attestation_ttl_seconds)
    assert shared.propose_action(plan).decision is Decision.EXECUTE
    assert [e.kind.value for e in shared.consequence_log("engineer-1")] == ["expiry"]


@pytest.mark.parametrize("amount", [math.inf, json.loads("1e400"), math.nan, 1e300, 11.0])
def test_absurd_estimates_and_usage_are_refused(shared: ColonyKernel, amount: float) -> None:
    with pytest.raises(KernelInputError) as caught:
        shared.propose_action({**DESTRUCTIVE_PLAN, "budget_estimate": {"llm_calls": amount}})
    assert caught.value.fields == ["budget_estimate.llm_calls"]
    report = {"agent_id": "a", "action_type": "x", "target": "t", "actual_outcome": "o", "tests_passed": True}
    with pytest.raises(KernelInputError) as caught:
        shared.record_outcome({**report, "runtime_seconds": amount if amount != 11.0 else 3601.0})
    assert caught.value.fields == ["runtime_seconds"]
    status = json.dumps(shared.status().model_dump(mode="json"), allow_nan=False)  # raises on inf/nan
    assert '"used": 0.0' in status


def test_1e400_over_mcp_never_reaches_the_ledger(shared: ColonyKernel) -> None:
    arguments = json.loads('{"agent_id": "a", "action_type": "x", "target": "t", "actual_outcome": "o", '
                           '"tests_passed": true, "llm_calls": 1e400}')  # fmt: skip
    answer = _mcp(shared, "colony_record_outcome", arguments)
    assert "llm_calls: unknown argument" in answer["error"]
    assert shared.status().budget_usage["llm_calls"].used == 0


# -- NUL bytes are input errors on every database ---------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("colony_propose_action", {**DESTRUCTIVE_PLAN, "agent_id": "ant\x00"}, "agent_id"),
        ("colony_propose_action", {**DESTRUCTIVE_PLAN, "target": "db.\x00x"}, "target"),
        ("colony_record_outcome", {"agent_id": "a", "action_type": "x", "target": "t", "actual_outcome": "\x00",
                                   "tests_passed": True}, "actual_outcome"),
        ("colony_agent_profile", {"agent_id": "\x00"}, "agent_id"),
        ("colony_pheromone_query", {"location": "a\x00", "signal_type": "failure"}, "location"),
    ],
)  # fmt: skip
def test_nul_bytes_are_field_errors(shared: ColonyKernel, tool: str, arguments: dict[str, Any], field: str) -> None:
    answer = _mcp(shared, tool, arguments)
    assert set(answer) == {"error"}
    assert f"{field}: contains a NUL character" in answer["error"]
    assert "database" not in answer["error"]
    assert shared.status().role_distribution == {}


# -- counters cannot contradict ---------------------------------------------------------------------------


def test_reports_without_proposals_do_not_inflate_accepted(shared: ColonyKernel) -> None:
    report = {"agent_id": "ant", "action_type": "patch_file", "target": "pkg.a", "actual_outcome": "ok",
              "tests_passed": True, "human_feedback": 1.0}  # fmt: skip
    for _ in range(3):
        _mcp(shared, "colony_record_outcome", report)
    profile = _mcp(shared, "colony_agent_profile", {"agent_id": "ant"})
    assert (profile["total_proposals"], profile["accepted_proposals"]) == (0, 0)
    assert len(profile["consequence_history"]) == 3


def test_with_attestation_off_a_used_verdict_is_not_handed_out_again(database_url: str) -> None:  # noqa: F811
    # A flow run keeps its verdict (a cached task) and asks the kernel for its authorization when it
    # acts. With attestation off no token was issued, and the kernel said "none" even once the
    # action was reported: a model repeating the same call in one run ran it again on that verdict,
    # after its trust had fallen, past the gate.
    kernel = ColonyKernel(KernelSettings(database_url=database_url, attestation="off", agent_budget_share=1.0))
    kernel.set_trust("engineer-1", 0.8)
    plan = good_plan()
    verdict = kernel.propose_action(plan)
    assert verdict.decision is Decision.EXECUTE and verdict.proposal_id is not None
    assert kernel.authorization_for(verdict.proposal_id, plan) is None  # not yet used: run it (no token)
    report = {key: plan[key] for key in ("agent_id", "action_type", "target")}
    kernel.record_outcome({**report, "actual_outcome": "patched", "tests_passed": True})
    with pytest.raises(AttestationError, match="already used or released"):
        kernel.authorization_for(verdict.proposal_id, plan)
    kernel.close()


# -- rm -rf / however it is spelled -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    ["rm -fr /", "rm -r -f /", 'rm -rf "/"', "rm --recursive --force /", "sh -c 'rm -rf /'", "echo hi\nrm -R /*"],
)
def test_rm_rf_root_in_tool_arguments_is_refused(shared: ColonyKernel, script: str) -> None:
    shared.set_trust("guard", 0.95)
    arguments = json.dumps({"script": script, "timeout": 5})
    evidence = json.dumps({"tests": ["t"], "tool": "shell_exec", "arguments": arguments})
    verdict = _mcp(shared, "colony_propose_action", {
        "agent_id": "guard", "action_type": "run_shell", "target": "tool:shell_exec",
        "rationale": "Clean the build directory before the nightly run", "rollback_plan": "rebuild",
        "evidence": evidence,
    })  # fmt: skip
    assert verdict["decision"] == "refuse"
    assert verdict["falsification_severity"] == 1.0 and "authorization" not in verdict


def test_an_agent_ticking_in_a_loop_cannot_erase_the_field(colony_home: Path, clock: FakeClock) -> None:  # noqa: F811
    # Each tick evaporates every trace: ticked in a loop, a FAILURE laid by a person's rejection
    # was gone in a fifth of a second. An agent's ticks advance at most once a minute.
    kernel = ColonyKernel(KernelSettings(home=colony_home, database_url=None), clock=clock)
    kernels = KernelProvider(kernel)
    kernel.deposit("billing.api", "failure", 5.0)
    ticker = Principal.of("upkeep-bot", ["kernel:tick", "kernel:read"])

    def strength() -> float:
        [trace] = kernel.pheromone_query("billing.api", "failure")
        return trace.strength

    before = strength()
    answers = [run_kernel_tool(kernels, "colony_tick", {}, ticker) for _ in range(60)]
    once = strength()
    assert {answer["tick_count"] for answer in answers} == {1} and 0 < once < before  # one advance, not sixty
    clock.advance(60)
    run_kernel_tool(kernels, "colony_tick", {}, ticker)
    assert strength() < once  # the next minute's tick advances
    assert run_kernel_tool(kernels, "colony_tick", {}, LOCAL_OPERATOR)["tick_count"] == 3  # an operator ticks freely
    kernel.close()


def test_an_agent_refused_in_a_loop_does_not_raise_the_pressure_on_everyone(
    colony_home: Path,
    clock: FakeClock,  # noqa: F811
) -> None:
    # Each refusal laid a FAILURE trace at its target, which the gate weighs for every agent: a new
    # SANDBOX identity proposing writes in a loop had a trusted agent's proposals there held.
    settings = KernelSettings(home=colony_home, database_url=None, budget_llm_calls=10**6)
    kernel = ColonyKernel(settings, clock=clock)
    kernel.set_trust("alice", 0.38)

    def proposal(agent: str) -> dict[str, Any]:
        return {
            "agent_id": agent,
            "action_type": "patch_file",
            "target": "billing.api",
            "rationale": "Fix the rounding of invoice totals in the billing API",
            "rollback_plan": "Revert the commit with git revert",
            "evidence": '{"tests": ["tests/test_billing.py"]}',
        }

    assert kernel.propose_action(proposal("alice")).decision is Decision.EXECUTE
    refusals = [kernel.propose_action(proposal("mallory")).decision for _ in range(10)]
    assert set(refusals) == {Decision.REFUSE}
    [trace] = kernel.pheromone_query("billing.api", "failure")
    once = trace.strength
    assert kernel.propose_action(proposal("alice")).decision is Decision.EXECUTE  # the first refusal's trace alone
    clock.advance(300)
    kernel.propose_action(proposal("mallory"))
    [trace] = kernel.pheromone_query("billing.api", "failure")
    assert trace.strength > once * 0.5  # a refusal in the next window lays its trace again: bounded, not silenced
    kernel.close()
