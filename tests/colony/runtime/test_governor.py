"""The Governor: a governed call is proposed, runs only on EXECUTE with a spent authorization, and is recorded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from colony.errors import ActionNotExecutedError, ToolInputError, UngatedActionError
from colony.kernel import ColonyKernel, Reporter
from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, HeldCall, HoldDecision, Runtime
from colony.runtime.authorization import Authorization
from tests.doubles import CALLS

MakeRuntime = Callable[..., Runtime]
CASE = {
    "rationale": "Record the nightly figures in the ledger for the audit trail",
    "rollback_plan": "erase_entry removes the written file again",
    "evidence": {"tests": ["tests/test_ledger.py::test_write"]},
}


def write(path: Path, agent: str = "engineer-1", **changes: object) -> CallRequest:
    fields: dict[str, object] = {"arguments": {"path": str(path), "text": "figures"}, "agent_id": agent, **CASE}
    return CallRequest("ledger_double", **{**fields, **changes})  # type: ignore[arg-type]


async def test_execute_runs_once_and_records_an_attested_outcome(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    outcome = await make_runtime().call(write(tmp_path / "entry"), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.EXECUTED and outcome.verdict and outcome.verdict["decision"] == "execute"
    assert "authorization" not in outcome.verdict
    assert (tmp_path / "entry").read_text() == "figures"
    [consequence] = kernel.consequence_log("engineer-1")
    assert consequence.proposal_id == outcome.verdict["proposal_id"]  # attested: linked to the verdict
    assert consequence.reported_by is Reporter.RUNTIME
    assert "for engineer-1 (by operator local-operator)" in consequence.actual_outcome
    assert outcome.record and outcome.record["consequence_id"] == consequence.consequence_id


async def test_a_sandbox_agent_is_refused_and_nothing_runs(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    outcome = await make_runtime().call(write(tmp_path / "entry", agent="newcomer"), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.REFUSED and outcome.verdict
    assert outcome.verdict["reason"] == "SANDBOX role: no write-path gate passes"
    assert not (tmp_path / "entry").exists()
    with pytest.raises(ActionNotExecutedError, match="refused"):
        outcome.raise_for_status()


async def test_the_gate_judges_the_tool_not_the_callers_target(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.4)  # enough to run where nothing failed (score 0.73)
    kernel.deposit("tool:ledger_double", "failure", 30.0)
    outcome = await make_runtime().call(write(tmp_path / "x", target="docs.readme"), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.HELD, outcome.verdict  # failures at the tool, not at docs.readme
    assert not (tmp_path / "x").exists()


async def test_a_governed_call_needs_a_rationale(make_runtime: MakeRuntime, tmp_path: Path) -> None:
    with pytest.raises(ToolInputError, match="give a rationale") as raised:
        await make_runtime().call(write(tmp_path / "x", rationale=None), LOCAL_OPERATOR)
    assert raised.value.errors[0].field == "rationale"


async def test_hold_waits_for_a_person_and_a_rejection_is_recorded(
    kernel: ColonyKernel, make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    seen: list[HeldCall] = []

    async def reject(held: HeldCall) -> HoldDecision:
        seen.append(held)
        return HoldDecision(approved=False, reviewer="ops@example.com", note="not tonight")

    runtime = make_runtime(on_hold=reject)
    outcome = await runtime.call(write(tmp_path / "x", approval_required=True), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.REJECTED and seen[0].verdict["decision"] == "hold"
    assert "human_approval" in seen[0].verdict["required_evidence"]
    assert not (tmp_path / "x").exists()
    [consequence] = kernel.consequence_log("engineer-1")
    assert "rejected by ops@example.com: not tonight" in consequence.actual_outcome
    assert consequence.human_feedback == -1.0 and not consequence.tests_passed


async def test_an_approved_hold_runs_and_records(
    kernel: ColonyKernel, make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)

    async def approve(held: HeldCall) -> HoldDecision:
        return HoldDecision(approved=True, reviewer="ops@example.com")

    outcome = await make_runtime(on_hold=approve).call(write(tmp_path / "x", approval_required=True), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.EXECUTED and (tmp_path / "x").read_text() == "figures"
    assert outcome.record and outcome.record["trust_score"] > 0.8
    assert outcome.verdict and (outcome.verdict["decision"], outcome.verdict["approved_by"]) == (
        "execute",
        "ops@example.com",
    )


async def test_a_failed_check_rolls_the_action_back(
    kernel: ColonyKernel, make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)

    async def check(result: object) -> None:
        raise RuntimeError("the figures do not add up")

    outcome = await make_runtime().call(write(tmp_path / "x"), LOCAL_OPERATOR, verify=check)
    assert outcome.status is CallStatus.FAILED and not (tmp_path / "x").exists()
    assert CALLS[f"erase:{tmp_path / 'x'}"] == 1
    [consequence] = kernel.consequence_log("engineer-1")
    assert "rolled back with erase_entry" in consequence.actual_outcome and not consequence.tests_passed


async def test_the_executor_refuses_a_governed_action_without_an_authorization(
    make_runtime: MakeRuntime, tmp_path: Path
) -> None:
    runtime = make_runtime()
    tool = runtime.catalog.resolve("ledger_double")
    arguments = {"path": str(tmp_path / "x"), "text": "t"}
    with pytest.raises(UngatedActionError, match="runs only with an authorization the gate issued"):
        await runtime.executor.run(tool, "write_entry", arguments, None)
    forged = Authorization(proposal_id="p", agent_id="a", tool="ledger_double", action="write_entry", token="x")
    with pytest.raises(UngatedActionError):
        await runtime.executor.run(tool, "write_entry", arguments, forged)
    assert not (tmp_path / "x").exists()


async def test_an_authorization_runs_its_action_once(make_runtime: MakeRuntime, tmp_path: Path) -> None:
    runtime = make_runtime()
    tool = runtime.catalog.resolve("ledger_double")
    issued = Authorization._issue(proposal_id="p", agent_id="a", tool="ledger_double", action="write_entry")
    arguments = {"path": str(tmp_path / "x"), "text": "t"}
    await runtime.executor.run(tool, "write_entry", arguments, issued)
    with pytest.raises(UngatedActionError, match="already used once"):
        await runtime.executor.run(tool, "write_entry", arguments, issued)
    with pytest.raises(UngatedActionError, match=r"issued for ledger_double\.write_entry, not"):
        other = Authorization._issue(proposal_id="q", agent_id="a", tool="ledger_double", action="write_entry")
        await runtime.executor.run(tool, "erase_entry", {"path": arguments["path"]}, other)
