"""Held deployment runs on a real ``prefect server``: seen, decided from any surface, resumed, expired, recorded.

Every run here is a deployment run a separate worker process serves, suspended on HOLD, with
``COLONY_ATTESTATION=required``: an approved call records only with the one-time
authorization its approval issued. The decision comes from ``colony approvals`` (a real
subprocess of the console script), from the Prefect API's resume input (what the UI's Resume
form sends), or from nobody (the tick's sweep, with the kernel's clock moved past the expiry).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.deployments import run_deployment
from prefect.events.worker import EventsWorker
from prefect.input.run_input import keyset_from_paused_state
from prefect.states import AwaitingRetry, Crashed, State

from colony.kernel import Approval, ApprovalState, AttestationMode, ColonyKernel, ConsequenceKind, KernelSettings
from flows._events import GATE_REFUSED
from flows.gated_action import GatedActionSummary, Outcome
from flows.holds import APPROVAL_TAG, approval_tag, artifact_key, settle_held_runs
from tests.flows.test_gated_action import WAITS, events_about, run_log
from tests.flows.workers import Worker, errors_logged, final, wait_until_suspended
from tests.services.prefect import PrefectServer

NAME = "holds-test"
COLONY = Path(sys.executable).parent / "colony"
REVIEWER = "ops@example.org"
CLI_DECIDED = f"local-operator (as {REVIEWER})"  # the CLI's principal, the typed name beside it
UI_DECIDED = f"prefect-operator (as {REVIEWER})"  # the Prefect UI carries no Colony identity


@pytest.fixture
def worker(
    workers: Callable[[str, str], Worker], colony_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Worker]:
    """One worker whose kernel (like this test's and the CLI's) demands attested outcome reports."""
    monkeypatch.setenv("COLONY_ATTESTATION", "required")
    monkeypatch.setenv("COLONY_ATTESTATION_SECRET", "held-runs-test-secret-of-enough-length")
    yield workers("worker", NAME)


@pytest.fixture(autouse=True)
def events_sent_here() -> Iterator[None]:
    """Events this process emits go to this test's server: its events worker is stopped after the test.

    Prefect keeps one events worker per process, bound to the API it first reached; left
    running, it would carry later tests' events (on another API) to this server.
    """
    yield
    EventsWorker.drain_all(timeout=30, at_exit=False)


def kernel(clock: Callable[[], float] = time.time) -> ColonyKernel:
    settings = KernelSettings()
    assert settings.attestation is AttestationMode.REQUIRED
    return ColonyKernel(settings, clock=clock)


def hold(agent: str, path: Path, **options: Any) -> tuple[UUID, Approval, State[Any]]:
    """Start a gated-action deployment run the gate holds; its id, its approval and its suspended state."""
    kernel().set_trust(agent, 0.8)  # trusted enough to be held, not to run without evidence of tests
    request = {
        "agent_id": agent,
        "call": {"tool": "ledger_double", "arguments": {"path": str(path), "text": "figures"}},
        "target": "ledger.held",
        "rationale": "Record the nightly figures in the ledger file for the audit trail",
        "rollback_plan": "erase_entry removes the written file again",
        **options,
    }
    run = run_deployment(f"gated-action/{NAME}", parameters={"request": request}, timeout=0)
    state = wait_until_suspended(run.id)
    [approval] = kernel().list_approvals(agent_id=agent, state="pending")
    return run.id, approval, state


def colony(*args: str, api: PrefectServer) -> subprocess.CompletedProcess[str]:
    """The console script, as a person at this machine runs it (the test's COLONY_* included)."""
    return subprocess.run([str(COLONY), *args], env=api.env(), capture_output=True, text=True, timeout=120, check=False)


def summary_of(state: State[Any]) -> GatedActionSummary:
    summary = state.result(raise_on_failure=False)
    assert isinstance(summary, GatedActionSummary)
    return summary


def test_a_held_run_shows_the_reviewer_everything_and_cli_approval_resumes_it(
    worker: Worker, api: PrefectServer, tmp_path: Path
) -> None:
    path = tmp_path / "approved.txt"
    run_id, approval, suspended = hold("held-approve", path)
    assert approval.flow_run_id == str(run_id)
    with get_client(sync_client=True) as client:
        assert {APPROVAL_TAG, approval_tag(approval.approval_id)} <= set(client.read_flow_run(run_id).tags)
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[artifact_key(approval.approval_id)]))
        )
        keyset = keyset_from_paused_state(suspended)
        description = client.read_flow_run_input(run_id, keyset["description"])
    markdown = str(artifact.data)
    assert artifact.flow_run_id == run_id
    assert approval.findings and approval.required_evidence
    for shown in (
        f"{approval.gate_score:.3f}",
        approval.reason,
        *approval.required_evidence,
        *(finding.claim for finding in approval.findings),
        "held-approve (by operator prefect-operator)",
        f"colony approvals approve {approval.approval_id}",
        f"/v1/approvals/{approval.approval_id}/approve",
        str(path),
    ):
        assert shown.replace("|", "\\|") in markdown, shown
    assert artifact_key(approval.approval_id) in description and approval.reason in description

    decided = colony("approvals", "approve", approval.approval_id, "--display-name", REVIEWER, "--note", "ok", api=api)
    assert decided.returncode == 0, decided.stderr
    assert f"flow run {run_id}: resumed" in decided.stderr

    state = final(run_id)
    assert state.name == "Executed" and state.is_completed(), state
    assert state.message == f"Executed: approved by {CLI_DECIDED}: ok"
    assert path.read_text() == "figures"
    summary = summary_of(state)
    assert summary.approval is not None and summary.approval.reviewer == CLI_DECIDED
    [entry] = kernel().consequence_log("held-approve")
    assert entry.proposal_id == approval.proposal_id  # attested: the approval's authorization was consumed
    assert entry.human_feedback == 1.0 and f"approved by {CLI_DECIDED}: ok" in entry.actual_outcome
    assert kernel().get_approval(approval.approval_id).executed_at is not None


def test_a_held_runs_log_says_once_why_it_waits_and_how_to_decide(worker: Worker, tmp_path: Path) -> None:
    run_id, approval, _ = hold("held-logged", tmp_path / "logged.txt")
    waits = WAITS.format(approval.approval_id)
    logs = run_log(run_id, until=lambda logs: any(waits in log.message for log in logs))
    [why] = [log for log in logs if waits in log.message]
    assert why.level == logging.INFO and "\n" not in why.message
    for shown in (
        "ledger_double.write_entry",
        f"on target {approval.target} for held-logged",
        f"colony approvals approve|reject {approval.approval_id}",
        f"/v1/approvals/{approval.approval_id}/approve",
    ):
        assert shown in why.message, why.message

    with get_client(sync_client=True) as client:
        client.resume_flow_run(run_id, run_input={"approve": True, "reviewer": REVIEWER, "note": "logged"})
    assert final(run_id).name == "Executed"
    worker.wait_until_idle()  # the resumed run's process has sent its log
    messages = [log.message for log in run_log(run_id, until=lambda logs: False, seconds=0)]
    assert sum(waits in message for message in messages) == 1, messages
    assert sum(message.startswith("Suspending flow run") for message in messages) == 1, messages


def test_a_cli_rejection_resumes_the_run_into_its_rejected_end(
    worker: Worker, api: PrefectServer, tmp_path: Path
) -> None:
    path = tmp_path / "rejected.txt"
    run_id, approval, _ = hold("held-reject", path)
    decided = colony(
        "approvals", "reject", approval.approval_id, "--display-name", REVIEWER, "--note", "not now", api=api
    )
    assert decided.returncode == 0, decided.stderr
    state = final(run_id)
    assert state.name == "Rejected" and state.is_failed(), state
    assert state.message == f"Rejected by {CLI_DECIDED}: not now"
    assert not path.exists()
    assert summary_of(state).outcome is Outcome.REJECTED
    assert errors_logged(worker, run_id) == []
    [entry] = kernel().consequence_log("held-reject")
    assert entry.kind is ConsequenceKind.REJECTION and entry.human_feedback == -1.0
    refused = events_about(GATE_REFUSED, "colony.target.tool:ledger_double", related="colony.agent.held-reject")
    assert refused and refused[0].payload["status"] == "rejected"


def test_a_resume_with_the_form_input_as_the_ui_sends_it_decides_the_approval(worker: Worker, tmp_path: Path) -> None:
    path = tmp_path / "ui.txt"
    run_id, approval, _ = hold("held-ui", path)
    with get_client(sync_client=True) as client:  # POST /flow_runs/{id}/resume, the UI's call
        client.resume_flow_run(run_id, run_input={"approve": True, "reviewer": REVIEWER, "note": "from the UI"})
    state = final(run_id)
    assert state.name == "Executed", state
    decided = kernel().get_approval(approval.approval_id)
    assert (
        decided.state is ApprovalState.APPROVED and decided.decided_by == UI_DECIDED and decided.note == "from the UI"
    )
    [entry] = kernel().consequence_log("held-ui")
    assert entry.proposal_id == approval.proposal_id and path.read_text() == "figures"


def test_an_approval_decided_elsewhere_is_handed_to_its_run_by_the_tick(worker: Worker, tmp_path: Path) -> None:
    path = tmp_path / "http.txt"
    run_id, approval, _ = hold("held-http", path)
    kernel().approve(approval.approval_id, REVIEWER, "over HTTP")  # what the gateway's approve route does
    [settled] = [s for s in settle_held_runs(kernel()) if s.flow_run_id == run_id]
    assert settled.action == "resumed"
    assert final(run_id).name == "Executed"
    assert path.read_text() == "figures"


def test_an_expired_request_is_recorded_and_its_run_ends_expired(worker: Worker, tmp_path: Path) -> None:
    run_id, approval, _ = hold("held-expire", tmp_path / "expired.txt")
    later = kernel(clock=lambda: approval.expires_at + 1)  # the tick, once the request is overdue
    [settled] = [s for s in settle_held_runs(later, clock=later.clock) if s.flow_run_id == run_id]
    assert settled.action == "resumed"
    state = final(run_id)
    assert state.name == "Expired" and state.is_failed(), state
    assert summary_of(state).outcome is Outcome.TIMED_OUT
    assert errors_logged(worker, run_id) == []
    assert kernel().get_approval(approval.approval_id).state is ApprovalState.EXPIRED
    [entry] = kernel().consequence_log("held-expire")
    assert entry.kind is ConsequenceKind.EXPIRY and not entry.tests_passed
    assert entry.trust_after < entry.trust_before
    refused = events_about(GATE_REFUSED, "colony.target.tool:ledger_double", related="colony.agent.held-expire")
    assert refused and refused[0].payload["status"] == "timed_out"


def test_a_request_whose_run_stopped_waiting_is_expired_by_the_tick(worker: Worker, tmp_path: Path) -> None:
    run_id, approval, _ = hold("held-short", tmp_path / "short.txt", approval_timeout_seconds=5)
    assert approval.expires_at > time.time() + 60  # the kernel's own expiry is an hour away
    [settled] = [s for s in settle_held_runs(kernel(), clock=lambda: time.time() + 10) if s.flow_run_id == run_id]
    assert settled.action == "resumed"
    assert final(run_id).name == "Expired"
    expired = kernel().get_approval(approval.approval_id)
    assert expired.state is ApprovalState.EXPIRED and expired.note == "the held run stopped waiting for a decision"


def test_a_run_whose_pause_lapsed_on_the_server_is_failed_with_the_recorded_refusal(
    worker: Worker, tmp_path: Path
) -> None:
    run_id, approval, suspended = hold("held-lapsed", tmp_path / "lapsed.txt")
    assert suspended.state_details.pause_timeout is not None
    beyond = suspended.state_details.pause_timeout.timestamp() + 1
    later = kernel(clock=lambda: beyond)
    [settled] = [s for s in settle_held_runs(later, clock=later.clock) if s.flow_run_id == run_id]
    assert settled.action == "ended"
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(run_id).state
    assert state is not None and state.name == "Expired" and state.is_failed()
    assert state.message is not None and approval.approval_id in state.message
    [entry] = kernel().consequence_log("held-lapsed")
    assert entry.kind is ConsequenceKind.EXPIRY
    refused = events_about(GATE_REFUSED, "colony.target.tool:ledger_double", related="colony.agent.held-lapsed")
    assert refused and refused[0].payload["status"] == "expired"


def crash_after_resume(run_id: UUID, suspended: State[Any], decision: dict[str, Any]) -> None:
    """What a resume followed by a crash leaves: ``decision`` saved under the pause key, the run AwaitingRetry.

    The run is set Crashed (the zombie automation's action) and then AwaitingRetry, unforced,
    as the recovery automation sets it; the server then clears the run's pause keys.
    """
    with get_client(sync_client=True) as client:
        client.create_flow_run_input(run_id, keyset_from_paused_state(suspended)["response"], json.dumps(decision))
        client.set_flow_run_state(run_id, Crashed(), force=True)  # from Submitting, on CI: here from Suspended
        scheduled = client.set_flow_run_state(run_id, AwaitingRetry())
        assert scheduled.status.value == "ACCEPT", scheduled.details
        assert not client.read_flow_run(run_id).empirical_policy.pause_keys  # what the run then sees


def test_a_run_scheduled_again_after_a_crash_keeps_the_decision_it_was_resumed_with(
    worker: Worker, tmp_path: Path
) -> None:
    """A crashed run scheduled again has its pause keys cleared by the server: it still reads the decision given."""
    path = tmp_path / "crashed.txt"
    run_id, approval, suspended = hold("held-crashed", path)
    crash_after_resume(run_id, suspended, {"approve": False, "reviewer": REVIEWER, "note": "not after a crash either"})
    state = final(run_id)
    assert state.name == "Rejected", state
    assert not path.exists()
    rejected = kernel().get_approval(approval.approval_id)
    assert rejected.state is ApprovalState.REJECTED and rejected.note == "not after a crash either"
    worker.wait_until_idle()
    messages = [log.message for log in run_log(run_id, until=lambda logs: False, seconds=0)]
    assert sum(message.startswith("Suspending flow run") for message in messages) == 1, messages


def test_a_saved_input_that_is_no_decision_is_asked_for_again(worker: Worker, tmp_path: Path) -> None:
    """An input written straight to the inputs API skips Prefect's form check: the run says so and waits again."""
    path = tmp_path / "garbled.txt"
    run_id, approval, suspended = hold("held-garbled", path)
    crash_after_resume(run_id, suspended, {"approve": "perhaps"})
    asking = "The decision saved for this run is not one, so it is asked for again"
    logs = run_log(run_id, until=lambda logs: any(asking in log.message for log in logs), seconds=180)
    assert any(asking in log.message and "approve" in log.message for log in logs), [log.message for log in logs]
    again = wait_until_suspended(run_id)
    assert again.is_paused() and not path.exists()
    assert kernel().get_approval(approval.approval_id).state is ApprovalState.PENDING
    with get_client(sync_client=True) as client:
        client.resume_flow_run(run_id, run_input={"approve": False, "reviewer": REVIEWER, "note": "now properly"})
    assert final(run_id).name == "Rejected"
