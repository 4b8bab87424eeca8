"""A held call carries its approval request; resubmitted with ``approval_id`` it runs once, when approved."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from colony.errors import ActionNotExecutedError, ApprovalError, IdentityError, ToolInputError
from colony.kernel import AttestationMode, ColonyKernel, KernelSettings
from colony.runtime import (
    LOCAL_OPERATOR,
    CallOutcome,
    CallRequest,
    CallStatus,
    Catalog,
    KernelProvider,
    Principal,
    Runtime,
)
from tests.colony.runtime.conftest import write_registry

MakeRuntime = Callable[..., Runtime]
AGENT = Principal.of("engineer-1", ["*"])
CASE = {
    "rationale": "Record the nightly figures in the ledger for the audit trail",
    "rollback_plan": "erase_entry removes the written file again",
    "evidence": {"tests": ["tests/test_ledger.py::test_write"]},
}


def write(path: Path, **changes: object) -> CallRequest:
    fields: dict[str, object] = {"arguments": {"path": str(path), "text": "figures"}, "approval_required": True, **CASE}
    return CallRequest("ledger_double", **{**fields, **changes})  # type: ignore[arg-type]


async def held(runtime: Runtime, path: Path) -> CallOutcome:
    outcome = await runtime.call(write(path), AGENT)
    assert outcome.status is CallStatus.HELD and outcome.approval is not None
    return outcome


async def test_a_held_call_names_its_approval_and_how_to_resolve_it(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    outcome = await held(make_runtime(), tmp_path / "x")
    approval = outcome.approval
    assert approval is not None and approval["state"] == "pending"
    assert approval["approval_id"] == outcome.verdict["approval_id"]  # type: ignore[index]
    assert approval["expires_at"] > 0 and "a person must approve" in approval["reason"]
    assert "human_approval" in approval["required_evidence"]
    assert approval["approval_id"] in approval["resolve"]["approve"]
    assert not (tmp_path / "x").exists()
    with pytest.raises(ActionNotExecutedError, match=f"approval {approval['approval_id']} awaits a person"):
        outcome.raise_for_status()


async def test_an_approved_resubmission_runs_once_and_records_the_reviewer(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    runtime = make_runtime()
    approval_id = (await held(runtime, tmp_path / "x")).approval["approval_id"]  # type: ignore[index]

    again = await runtime.call(write(tmp_path / "x", approval_id=approval_id), AGENT)
    assert again.status is CallStatus.HELD and again.approval["approval_id"] == approval_id  # type: ignore[index]
    assert kernel.proposal_counts("engineer-1").total == 1  # no new proposal

    kernel.approve(approval_id, "ops@example.org", "fine")
    done = await runtime.call(write(tmp_path / "x", approval_id=approval_id, rationale=None), AGENT)
    assert done.status is CallStatus.EXECUTED and (tmp_path / "x").read_text() == "figures"
    assert done.approval and done.approval["reviewer"] == "ops@example.org"
    [consequence] = kernel.consequence_log("engineer-1")
    assert consequence.proposal_id == done.verdict["proposal_id"]  # type: ignore[index]
    assert "approved by ops@example.org: fine" in consequence.actual_outcome
    (tmp_path / "x").unlink()
    with pytest.raises(ApprovalError, match="already executed"):
        await runtime.call(write(tmp_path / "x", approval_id=approval_id), AGENT)
    assert not (tmp_path / "x").exists()


async def test_a_rejected_resubmission_is_rejected_with_the_record(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    runtime = make_runtime()
    approval_id = (await held(runtime, tmp_path / "x")).approval["approval_id"]  # type: ignore[index]
    kernel.reject(approval_id, "ops@example.org", "not tonight")
    outcome = await runtime.call(write(tmp_path / "x", approval_id=approval_id), AGENT)
    assert outcome.status is CallStatus.REJECTED and not (tmp_path / "x").exists()
    assert outcome.record and outcome.record["trust_score"] < 0.8
    assert outcome.approval and outcome.approval["note"] == "not tonight"


async def test_a_resubmission_must_be_the_approved_call(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    runtime = make_runtime()
    approval_id = (await held(runtime, tmp_path / "x")).approval["approval_id"]  # type: ignore[index]
    kernel.approve(approval_id, "ops", "")
    changed = write(tmp_path / "x", approval_id=approval_id, arguments={"path": str(tmp_path / "y"), "text": "x"})
    with pytest.raises(ToolInputError) as raised:
        await runtime.call(changed, AGENT)
    assert raised.value.errors[0].field == "arguments"
    with pytest.raises(IdentityError):
        await runtime.call(write(tmp_path / "x", approval_id=approval_id), Principal.of("engineer-2", ["*"]))
    assert not (tmp_path / "y").exists()


async def test_an_operator_may_resubmit_for_the_agent(
    make_runtime: MakeRuntime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    runtime = make_runtime()
    approval_id = (await held(runtime, tmp_path / "x")).approval["approval_id"]  # type: ignore[index]
    kernel.approve(approval_id, "ops", "")
    outcome = await runtime.call(write(tmp_path / "x", approval_id=approval_id, agent_id="engineer-1"), LOCAL_OPERATOR)
    assert outcome.status is CallStatus.EXECUTED


async def test_attestation_required_runs_the_approved_path(tmp_path: Path, colony_home: Path) -> None:
    kernel = ColonyKernel(KernelSettings(home=colony_home, attestation=AttestationMode.REQUIRED))
    runtime = Runtime(Catalog(write_registry(tmp_path, ["ledger_double"])), kernels=KernelProvider(kernel))
    try:
        kernel.set_trust("engineer-1", 0.8)
        approval_id = (await held(runtime, tmp_path / "x")).approval["approval_id"]  # type: ignore[index]
        kernel.approve(approval_id, "ops", "")
        outcome = await runtime.call(write(tmp_path / "x", approval_id=approval_id), AGENT)
        assert outcome.status is CallStatus.EXECUTED and outcome.record
        [consequence] = kernel.consequence_log("engineer-1")
        assert consequence.proposal_id == outcome.verdict["proposal_id"]  # type: ignore[index]
    finally:
        await runtime.aclose()
