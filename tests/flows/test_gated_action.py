"""gated_action: execute, refuse, hold (approve, reject, timeout) and rollback, on real Prefect.

Each run ends in a state named for its outcome, with the summary as its result and an artifact.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterKey,
    FlowRunFilter,
    FlowRunFilterName,
    LogFilter,
    LogFilterFlowRunId,
)
from prefect.client.schemas.objects import Log
from prefect.client.schemas.sorting import LogSort
from prefect.events.filters import EventFilter, EventNameFilter, EventRelatedFilter, EventResourceFilter
from prefect.flow_runs import resume_flow_run
from prefect.states import State

from colony.errors import ToolInputError
from colony.kernel import ColonyKernel, Decision, KernelSettings, Reporter, Role, SignalType
from flows._events import GATE_REFUSED, ROLE_CHANGED
from flows.gated_action import (
    OUTCOME_ARTIFACT,
    GatedActionRequest,
    GatedActionSummary,
    Outcome,
    ending,
    gated_action,
)
from flows.tool_call import ToolCall
from tasks.kernel import kernel_for
from tests.doubles import CALLS

pytestmark = pytest.mark.usefixtures("prefect_harness")
LEDGER = "ledger_double"
TESTED = {"tests": ["tests/test_ledger.py::test_write"]}
WAITS = "Waiting for a person to decide approval {}"  # a held run's log line, with the approval's id


@pytest.fixture
def kernel() -> ColonyKernel:
    return kernel_for(KernelSettings())


def request(path: Path, agent: str = "engineer-1", **changes: Any) -> GatedActionRequest:
    fields: dict[str, Any] = {
        "agent_id": agent,
        "call": ToolCall(tool=LEDGER, arguments={"path": str(path), "text": "figures"}),
        "target": "ledger.nightly",
        "rationale": "Record the nightly figures in the ledger file for the audit trail",
        "rollback_plan": "erase_entry removes the written file again",
        "evidence": TESTED,
        "approval_poll_seconds": 1,
        **changes,
    }
    return GatedActionRequest(**fields)


def run(gated: GatedActionRequest, name: str, *, succeeded: bool = False) -> GatedActionSummary:
    """Run the flow; its final state must be named ``name``; the summary is the state's result."""
    state = gated_action(gated, return_state=True)
    assert (state.name, state.is_completed(), state.is_failed()) == (name, succeeded, not succeeded), state
    return summary_of(state)


def summary_of(state: State[Any]) -> GatedActionSummary:
    summary = state.result(raise_on_failure=False)
    assert isinstance(summary, GatedActionSummary), summary
    return summary


def test_execute_runs_the_tool_and_records_an_attested_outcome(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    summary = run(request(tmp_path / "entry.txt"), "Executed", succeeded=True)
    assert summary.outcome is Outcome.EXECUTED and summary.verdict.decision is Decision.EXECUTE
    assert summary.verdict.authorization is None  # the token is not handed back
    assert summary.result == {"path": str(tmp_path / "entry.txt")}
    assert (tmp_path / "entry.txt").read_text() == "figures"
    [consequence] = kernel.consequence_log("engineer-1")
    assert consequence.consequence_id == summary.consequence_id
    assert consequence.proposal_id == summary.verdict.proposal_id  # attested: linked to the verdict
    assert consequence.tests_passed and summary.trust_after == consequence.trust_after > 0.8
    assert consequence.reported_by is Reporter.RUNTIME  # Colony ran it: its own report raises trust


def test_refuse_ends_with_the_verdict_and_a_failure_signal(kernel: ColonyKernel, tmp_path: Path) -> None:
    summary = run(request(tmp_path / "entry.txt", agent="newcomer"), "Refused")
    assert summary.outcome is Outcome.REFUSED
    assert summary.verdict.reason == "SANDBOX role: no write-path gate passes"
    assert not (tmp_path / "entry.txt").exists()
    assert kernel.consequence_log("newcomer") == []
    [signal] = kernel.pheromone_query("tool:ledger_double", SignalType.FAILURE)  # the tool, not the caller's target
    assert signal.evidence["proposal_id"] == summary.verdict.proposal_id


def run_until_paused(gated: GatedActionRequest) -> tuple[threading.Thread, dict[str, Any], Any]:
    """Start the flow in a thread and wait until its run is paused for approval."""
    name = f"gated-{uuid.uuid4().hex[:8]}"
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["state"] = gated_action.with_options(flow_run_name=name)(gated, return_state=True)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline and thread.is_alive():
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name])))
            if runs and runs[0].state and runs[0].state.is_paused():
                return thread, box, runs[0].id
            time.sleep(0.3)
    thread.join(timeout=5)
    raise AssertionError(f"the run never paused: {box}")


def finish(thread: threading.Thread, box: dict[str, Any], name: str) -> GatedActionSummary:
    thread.join(timeout=60)
    assert "error" not in box, box.get("error")
    assert box["state"].name == name, box["state"]
    return summary_of(box["state"])


def run_log(run_id: UUID, *, until: Callable[[list[Log]], bool], seconds: float = 60) -> list[Log]:
    """The run's log as the Prefect API holds it, once ``until`` holds (a run's process sends it as it goes)."""
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while True:
            logs = client.read_logs(
                log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])), sort=LogSort.TIMESTAMP_ASC
            )
            if until(logs) or time.monotonic() > deadline:
                return logs
            time.sleep(0.5)


def test_hold_is_resumed_with_approval_through_the_api(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    path = tmp_path / "entry.txt"
    thread, box, flow_run_id = run_until_paused(request(path, evidence={}))  # no tests: the gate holds
    assert not path.exists()
    [approval] = kernel.list_approvals(agent_id="engineer-1", state="pending")
    waits = WAITS.format(approval.approval_id)
    logs = run_log(flow_run_id, until=lambda logs: any(waits in log.message for log in logs))
    [why] = [log.message for log in logs if waits in log.message]  # an in-process run pauses: no restart
    assert why.startswith(f"{waits}: {LEDGER}.write_entry on target {approval.target}"), why
    assert f"colony approvals approve|reject {approval.approval_id}" in why
    resume_flow_run(flow_run_id, run_input={"approve": True, "reviewer": "ops@example.org", "note": "looks right"})
    summary = finish(thread, box, "Executed")
    assert summary.verdict.decision is Decision.EXECUTE and summary.outcome is Outcome.EXECUTED  # as approved
    assert summary.approval is not None and summary.approval.reviewer == "prefect-operator (as ops@example.org)"
    assert path.read_text() == "figures"
    [consequence] = kernel.consequence_log("engineer-1")
    assert consequence.tests_passed and consequence.human_feedback == 1.0


def test_hold_rejected_records_the_refusal(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    path = tmp_path / "entry.txt"
    thread, box, flow_run_id = run_until_paused(request(path, evidence={}))
    resume_flow_run(flow_run_id, run_input={"approve": False, "reviewer": "ops@example.org", "note": "not today"})
    summary = finish(thread, box, "Rejected")
    assert summary.outcome is Outcome.REJECTED and not path.exists()
    [consequence] = kernel.consequence_log("engineer-1")
    assert not consequence.tests_passed and consequence.human_feedback == -1.0
    assert "rejected by prefect-operator (as ops@example.org): not today" in consequence.actual_outcome
    assert summary.trust_after is not None and summary.trust_after < 0.8


def test_hold_times_out_into_a_refusal(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    summary = run(request(tmp_path / "entry.txt", evidence={}, approval_timeout_seconds=2), "Expired")
    assert summary.outcome is Outcome.TIMED_OUT and summary.approval is None
    [consequence] = kernel.consequence_log("engineer-1")
    assert "held, and nobody decided in time" in consequence.actual_outcome


def test_a_failed_check_rolls_the_action_back_and_records_failure(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    path = tmp_path / "entry.txt"
    check = ToolCall(tool=LEDGER, action="check_entry", arguments={"path": str(path), "expected": "other figures"})
    summary = run(request(path, verify=check), "RolledBack")
    assert summary.outcome is Outcome.FAILED
    assert summary.rolled_back == ["erase_entry"] and CALLS[f"erase:{path}"] == 1
    assert not path.exists()  # the write was undone
    assert summary.error is not None and summary.error["type"] == "VerificationError"
    [consequence] = kernel.consequence_log("engineer-1")
    assert not consequence.tests_passed and "rolled back with erase_entry" in consequence.actual_outcome
    assert consequence.proposal_id == summary.verdict.proposal_id


def test_a_passing_check_keeps_the_action(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    path = tmp_path / "entry.txt"
    check = ToolCall(tool=LEDGER, action="check_entry", arguments={"path": str(path), "expected": "figures"})
    summary = run(request(path, verify=check), "Executed", succeeded=True)
    assert summary.outcome is Outcome.EXECUTED and summary.rolled_back == [] and path.exists()


def test_a_failing_action_is_recorded_without_rollback(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    path = tmp_path / "entry.txt"
    gated = request(path, call=ToolCall(tool=LEDGER, arguments={"path": str(path), "text": "x", "fail": True}))
    summary = run(gated, "ToolFailed")
    assert summary.outcome is Outcome.FAILED and summary.rolled_back == []
    assert summary.error == {
        "type": "ToolExecutionError",
        "message": "ledger_double failed: ConnectionError: disk went away",
        "retryable": True,
    }
    assert CALLS[f"write:{path}"] == 1  # side-effecting, not idempotent: never retried


def test_bad_arguments_fail_before_the_gate_is_asked(kernel: ColonyKernel, tmp_path: Path) -> None:
    gated = request(tmp_path / "e.txt", call=ToolCall(tool=LEDGER, arguments={"path": 3}))
    with pytest.raises(ToolInputError, match="path"):
        gated_action(gated)
    assert kernel.agent_profile("engineer-1").total_proposals == 0


def events_about(name: str, resource_id: str, seconds: float = 30, related: str | None = None) -> list[Any]:
    """The events called ``name`` about ``resource_id`` (and ``related``, if given), once the API has them."""
    deadline = time.monotonic() + seconds
    flt = EventFilter(
        event=EventNameFilter(name=[name]),
        resource=EventResourceFilter(id=[resource_id]),
        related=EventRelatedFilter(id=[related]) if related else None,
    )
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            events = client.read_events(filter=flt, limit=50).events
            if events:
                return events
            time.sleep(0.5)
    return []


def test_a_refusal_emits_an_event(tmp_path: Path) -> None:
    agent = f"stranger-{uuid.uuid4().hex[:8]}"
    summary = run(request(tmp_path / "entry.txt", agent=agent, target="ledger.nightly"), "Refused")
    assert summary.verdict is not None
    mine = events_about(GATE_REFUSED, "colony.target.tool:ledger_double", related=f"colony.agent.{agent}")
    assert mine, "no refusal event for the agent"
    assert mine[0].payload["decision"] == "refuse" and mine[0].payload["action_type"] == "write_entry"
    assert mine[0].payload["reason"] == summary.verdict.reason


def test_a_role_change_emits_an_event(kernel: ColonyKernel, tmp_path: Path) -> None:
    agent = f"climber-{uuid.uuid4().hex[:8]}"
    kernel.set_trust(agent, 0.845)
    summary = run(request(tmp_path / "entry.txt", agent=agent), "Executed", succeeded=True)
    assert summary.role_after is Role.GUARD_ANT
    [event] = events_about(ROLE_CHANGED, f"colony.agent.{agent}")
    assert (event.payload["before"], event.payload["after"]) == ("dispatcher", "guard_ant")


def artifact_of(state: State[Any]) -> str:
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=[OUTCOME_ARTIFACT]),
                flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]),
            )
        )
    assert isinstance(artifact.data, str)
    return artifact.data


def test_the_run_shows_what_happened_and_keeps_the_summary_as_its_result(kernel: ColonyKernel, tmp_path: Path) -> None:
    kernel.set_trust("engineer-1", 0.8)
    state = gated_action(request(tmp_path / "entry.txt"), return_state=True)
    summary = summary_of(state)
    assert summary.trust_before == 0.8 and summary.trust_after is not None and summary.trust_after > 0.8
    with get_client(sync_client=True) as client:  # read back through the API, as another process would
        stored = client.read_flow_run(state.state_details.flow_run_id).state
    assert stored is not None and stored.name == "Executed" and stored.message == f"Executed: {summary.verdict.reason}"
    assert stored.result() == summary
    shown = artifact_of(state)
    assert "# Gated action: Executed" in shown and f"| consequence | {summary.consequence_id} |" in shown
    assert f"| reason | {summary.verdict.reason} |" in shown and "| trust | 0.800 -> " in shown
    assert '"path": "' + str(tmp_path / "entry.txt") in shown  # the tool's result


def test_a_refused_run_shows_the_reason_and_unchanged_trust(kernel: ColonyKernel, tmp_path: Path) -> None:
    state = gated_action(request(tmp_path / "entry.txt", agent="newcomer"), return_state=True)
    assert state.message == "Refused: SANDBOX role: no write-path gate passes"
    shown = artifact_of(state)
    assert "| verdict | refuse (gate score 0.000) |" in shown and "| trust | 0.100 -> 0.100 |" in shown
    assert "| consequence | none recorded |" in shown


@pytest.mark.parametrize(
    ("outcome", "changes", "name"),
    [
        (Outcome.EXECUTED, {}, "Executed"),
        (Outcome.REFUSED, {}, "Refused"),
        (Outcome.REJECTED, {}, "Rejected"),
        (Outcome.TIMED_OUT, {}, "Expired"),
        (Outcome.HELD, {}, "Held"),
        (Outcome.FAILED, {"rolled_back": ["erase_entry"]}, "RolledBack"),
        (Outcome.FAILED, {"error": {"type": "VerificationError", "message": "m", "retryable": False}}, "CheckFailed"),
        (Outcome.FAILED, {"error": {"type": "ToolExecutionError", "message": "m", "retryable": True}}, "ToolFailed"),
    ],
)
def test_each_outcome_names_the_final_state(outcome: Outcome, changes: dict[str, Any], name: str) -> None:
    assert ending(GatedActionSummary(outcome=outcome, **changes)) == (name, outcome is Outcome.EXECUTED)
