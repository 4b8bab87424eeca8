"""Held runs on the Prefect side: what a reviewer sees, how a run is linked to its approval, how it is resumed.

A gated-action run the gate held publishes a reviewer's artifact (``approval-<id>``), says in
its log why it waits and how to decide (``waiting_line``), tags itself ``colony-approval``
and ``approval:<id>``, and notes its id on the kernel's request (``attach_flow_run``) before
it pauses or suspends. The decision may then come from anywhere: a Resume in the Prefect UI
(the run itself puts it in the kernel), or the CLI, HTTP or MCP (the kernel holds it and the
run is resumed with it: at once by ``colony approvals``, else by the tick's
:func:`settle_held_runs`). The tick also expires a request
whose run stopped waiting, and resumes an expired request's run so that it ends in its own
``Expired`` state; a run whose pause already lapsed on the server (it can no longer be
resumed) is set ``Failed`` with the recorded refusal as its message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType, FlowRunFilterTags
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.client.schemas.responses import SetStateStatus
from prefect.context import FlowRunContext
from prefect.exceptions import ObjectNotFound
from prefect.logging import get_run_logger
from prefect.settings import PREFECT_UI_URL
from prefect.states import Failed

from colony.errors import ApprovalError, UnknownApprovalError
from colony.kernel import Approval, ApprovalState, ColonyKernel
from colony.runtime import HeldCall
from flows._approval import RESUME_GRACE_SECONDS
from flows._events import emit_gate_refused
from flows._report import publish

__all__ = [
    "APPROVAL_TAG",
    "Settled",
    "approval_tag",
    "artifact_key",
    "present_hold",
    "resume_input",
    "resume_run",
    "settle_held_runs",
    "waiting_line",
]

APPROVAL_TAG = "colony-approval"
DEFAULT_GATEWAY = "http://127.0.0.1:8787"
SWEEP_LIMIT = 200
NOT_WAITING = "no longer waiting (resumed or ended already)"
RESUME_IN_UI = ", or Resume on this run in the Prefect UI"


def approval_tag(approval_id: str) -> str:
    """The tag naming the approval a run waits on."""
    return f"approval:{approval_id}"


def artifact_key(approval_id: str) -> str:
    """The key of the reviewer's artifact for ``approval_id``."""
    return f"approval-{approval_id}"


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def review_markdown(approval: Approval, held: HeldCall, gateway_url: str) -> str:
    """Everything a reviewer needs to judge the held call, and the commands that decide it."""
    rows = {
        "approval": f"`{approval.approval_id}` ({approval.state.value})",
        "agent": approval.agent_id,
        "asked by": held.acting.describe(),
        "call": f"{held.tool}.{held.action}",
        "target": approval.target,
        "gate score": f"{approval.gate_score:.3f}",
        "reason": approval.reason,
        "required evidence": ", ".join(approval.required_evidence) or "none",
        "requested": _when(approval.requested_at),
        "expires": f"{_when(approval.expires_at)} (then it is recorded as a refusal)",
        "proposal": approval.proposal_id,
    }
    table = "\n".join(f"| {name} | {_cell(value)} |" for name, value in rows.items())
    findings = "\n".join(
        f"| {f.attack_vector.value} | {f.severity.value} | {_cell(f.claim)} | {_cell(f.remediation)} |"
        for f in approval.findings
    )
    findings = (
        f"| vector | severity | claim | remediation |\n|---|---|---|---|\n{findings}" if findings else "No findings."
    )
    decide = approval.approval_id
    return (
        f"# Held for a person: {held.tool}.{held.action}\n\n| | |\n|---|---|\n{table}\n\n"
        f"## Findings\n\n{findings}\n\n## Arguments\n\n```json\n{approval.arguments or '{}'}\n```\n\n"
        "## Decide\n\n"
        "In the Prefect UI: **Resume** on this run (approve, your name, note; recorded as prefect-operator). "
        "Or:\n\n"
        "```bash\n"
        f'colony approvals approve {decide} --display-name you@example.org --note "why"\n'
        f'colony approvals reject {decide} --display-name you@example.org --note "why"\n'
        f"curl -X POST {gateway_url}/v1/approvals/{decide}/approve "
        "-H 'Content-Type: application/json' -d '{\"note\": \"why\"}'\n"
        "```\n"
    )


def _gateway_url() -> str:
    """Where a reviewer reaches the gateway's approval routes."""
    return os.environ.get("COLONY_GATEWAY_URL", DEFAULT_GATEWAY)


def waiting_line(approval: Approval, then: str = RESUME_IN_UI) -> str:
    """One log line: which call waits on which approval, and how to decide it (``then``: the way on from here)."""
    decide = approval.approval_id
    line = (
        f"Waiting for a person to decide approval {decide}: {approval.tool}.{approval.action} on target "
        f"{approval.target} for {approval.agent_id} (gate score {approval.gate_score:.3f}: {approval.reason}); "
        f"expires {_when(approval.expires_at)}. Decide with `colony approvals approve|reject {decide}` "
        f"or POST {_gateway_url()}/v1/approvals/{decide}/approve|reject{then}."
    )
    return " ".join(line.split())  # one line, whatever the reason or target holds


def present_hold(kernel: ColonyKernel, approval: Approval, held: HeldCall) -> str:
    """Publish the reviewer's artifact, log why the run waits, link it to ``approval``; the Resume form's text."""
    artifact = artifact_key(approval.approval_id)
    publish(artifact, review_markdown(approval, held, _gateway_url()), f"held: {held.tool}.{held.action}")
    context = FlowRunContext.get()
    if context is not None and context.flow_run is not None:
        get_run_logger(context).info(waiting_line(approval))
        run = context.flow_run
        with get_client(sync_client=True) as client:
            tags = sorted({*run.tags, APPROVAL_TAG, approval_tag(approval.approval_id)})
            client.update_flow_run(run.id, tags=tags)
        kernel.attach_flow_run(approval.approval_id, str(run.id))
    where = f"[{artifact}]({PREFECT_UI_URL.value()}/artifacts/key/{artifact})" if PREFECT_UI_URL.value() else artifact
    return (
        f"**Held: {held.tool}.{held.action}** for {held.acting.describe()}. Gate score "
        f"{approval.gate_score:.3f}: {approval.reason}\n\nRequired evidence: "
        f"{', '.join(approval.required_evidence) or 'none'}. Expires {_when(approval.expires_at)}.\n\n"
        f"Everything a reviewer needs (findings, arguments) is in the artifact {where} "
        f"(this run's Artifacts tab). Approval `{approval.approval_id}`."
    )


def resume_input(approval: Approval) -> dict[str, Any]:
    """The Resume form's answer for a decided request (an expiry is a refusal by Colony)."""
    return {
        "approve": approval.state is ApprovalState.APPROVED,
        "reviewer": approval.decided_by or "colony",
        "note": approval.note or "",
    }


def _ending(approval: Approval) -> tuple[str, str]:
    """The state name and message of a run ended from outside because its pause lapsed."""
    if approval.state is ApprovalState.REJECTED:
        return "Rejected", f"Rejected by {approval.decided_by}: {approval.note or 'no note'}"
    if approval.state is ApprovalState.APPROVED:
        return "Expired", f"approved by {approval.decided_by} after the run stopped waiting: the call did not run"
    return "Expired", f"Expired: nobody decided in time (approval {approval.approval_id}); recorded as a refusal"


@dataclass(frozen=True)
class Settled:
    """What the sweep did with one held run."""

    flow_run_id: UUID
    approval_id: str
    action: str  # "resumed", "ended", "waiting" or NOT_WAITING


def resume_run(
    client: SyncPrefectClient, approval: Approval, now: float | None = None, run: FlowRun | None = None
) -> str:
    """Hand a decided ``approval`` to the run waiting on it: "resumed", "ended" (its pause lapsed) or NOT_WAITING."""
    if approval.flow_run_id is None or approval.state is ApprovalState.PENDING:
        return NOT_WAITING
    try:
        run = run or client.read_flow_run(UUID(approval.flow_run_id))
    except ObjectNotFound:
        return NOT_WAITING
    state = run.state
    if state is None or not state.is_paused():
        return NOT_WAITING
    lapsed = state.state_details.pause_timeout
    if lapsed is not None and lapsed.timestamp() <= (time.time() if now is None else now):
        if not suspended(run):  # an in-process pause: the process that waits ends its own run
            return NOT_WAITING
        # The server would fail it "never resumed" on a resume; end it with what was recorded instead.
        name, message = _ending(approval)
        client.set_flow_run_state(run.id, Failed(name=name, message=message), force=True)
        verdict = {"decision": "hold", "approval_id": approval.approval_id, "status": approval.state.value}
        emit_gate_refused(approval.agent_id, approval.action, f"tool:{approval.tool}", verdict)
        return "ended"
    response = client.resume_flow_run(run.id, run_input=resume_input(approval))
    return "resumed" if response.status is SetStateStatus.ACCEPT else NOT_WAITING


def _held_runs(client: SyncPrefectClient) -> list[FlowRun]:
    paused = FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))
    runs = client.read_flow_runs(
        flow_run_filter=FlowRunFilter(state=paused, tags=FlowRunFilterTags(all_=[APPROVAL_TAG])), limit=SWEEP_LIMIT
    )
    return list(runs)


def _approval_id(run: FlowRun) -> str | None:
    prefix = approval_tag("")
    return next((tag.removeprefix(prefix) for tag in run.tags if tag.startswith(prefix)), None)


def settle_held_runs(kernel: ColonyKernel, *, clock: Callable[[], float] = time.time) -> list[Settled]:
    """Resume (or end) every held run whose approval was decided or expired; expire those whose wait ran out."""
    settled = []
    with get_client(sync_client=True) as client:
        for run in _held_runs(client):
            approval_id = _approval_id(run)
            if approval_id is None or run.state is None:
                continue
            try:
                approval = kernel.get_approval(approval_id)  # an overdue request is expired (and recorded) here
                deadline = run.state.state_details.pause_timeout
                waited = (
                    suspended(run) and deadline is not None and deadline.timestamp() - RESUME_GRACE_SECONDS <= clock()
                )
                if approval.state is ApprovalState.PENDING and waited:  # the run stopped waiting
                    approval = _expire(kernel, approval_id)
            except UnknownApprovalError:  # tagged by hand, or another kernel's request
                continue
            if approval.state is ApprovalState.PENDING:
                settled.append(Settled(run.id, approval_id, "waiting"))
                continue
            linked = approval.model_copy(update={"flow_run_id": str(run.id)})
            action = resume_run(client, linked, clock(), run)
            settled.append(Settled(run.id, approval_id, action))
    return settled


def _expire(kernel: ColonyKernel, approval_id: str) -> Approval:
    try:
        return kernel.expire_approval(approval_id, "the held run stopped waiting for a decision")
    except ApprovalError:  # decided meanwhile: that decision stands
        return kernel.get_approval(approval_id)


def suspended(run: FlowRun) -> bool:
    """Whether ``run`` suspended (a deployment run, its pause outlasting its wait) rather than paused in-process."""
    return run.deployment_id is not None
