"""``colony approvals``: see and decide the calls the gate held for a person.

The CLI is this machine's operator (``LOCAL_OPERATOR``), so it sees every request and
may decide any; the reviewer recorded is the operator (``--display-name`` is only shown
beside it). A decision on a request a Prefect run waits on resumes that run at once (``flows.holds``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated
from uuid import UUID

import typer
from rich.markup import escape
from rich.table import Column, Table

from colony.cli.failures import ColonyTyper, JsonFlag
from colony.cli.kernel import _kernel
from colony.cli.output import cli_console
from colony.kernel import Approval

approvals_app = ColonyTyper(no_args_is_help=True, help="Held calls waiting for (or decided by) a person.")
IdArgument = Annotated[str, typer.Argument(help="The approval request's id.")]
DisplayNameOption = Annotated[
    str | None,
    typer.Option("--display-name", help="A name shown beside the local operator (who decides), e.g. an email."),
]
AGENT_RUN_FLOW = "agent-run"  # flows.agent_run's flow: a held one ends, and a new run carries it on
NoteOption = Annotated[str, typer.Option("--note", help="Why, in a sentence; recorded with the decision.")]


def _when(timestamp: float | None) -> str:
    return "-" if timestamp is None else datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _print(approval: Approval) -> None:
    out = cli_console()  # decided per print: piped output is never cut
    out.print(f"[bold]approval[/bold] {approval.approval_id}   [bold]state[/bold] {approval.state.value}")
    rows = [
        ("agent", approval.agent_id),
        ("call", f"{approval.tool}.{approval.action} (target {approval.target})"),
        ("arguments sha256", approval.arguments_digest),
        ("gate score", f"{approval.gate_score:.2f}"),
        ("reason", approval.reason),
        ("required evidence", ", ".join(approval.required_evidence) or "-"),
        ("requested", _when(approval.requested_at)),
        ("expires", _when(approval.expires_at)),
        ("reviewer", approval.decided_by or "-"),
        ("note", approval.note or "-"),
        ("decided", _when(approval.decided_at)),
        ("executed", _when(approval.executed_at)),
        ("proposal", approval.proposal_id),
        ("flow run", approval.flow_run_id or "-"),
    ]
    table = Table(show_header=False, box=None)
    for name, value in rows:
        table.add_row(f"[bold]{name}[/bold]", escape(value))
    out.print(table)
    out.print("[bold]arguments[/bold] (declared secrets redacted)")
    out.print(escape(approval.arguments or "-"), highlight=False, soft_wrap=True)
    if approval.findings:
        findings = Table("vector", "severity", "claim", "remediation", title="findings")
        for finding in approval.findings:
            findings.add_row(finding.attack_vector.value, finding.severity.value, finding.claim, finding.remediation)
        out.print(findings)


def _emit(approval: Approval, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(approval.model_dump(mode="json"), indent=2))
    else:
        _print(approval)


@approvals_app.command("list")
def list_approvals(
    state: Annotated[
        str | None, typer.Option("--state", help="Only this state: pending, approved, rejected or expired.")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's requests.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """List approval requests, newest first."""
    found = _kernel().list_approvals(state=state, agent_id=agent)
    if as_json:
        typer.echo(json.dumps([approval.model_dump(mode="json") for approval in found], indent=2))
        return
    table = Table(  # the id whole (a person copies it), and the state (what they look for)
        Column("id", min_width=36, no_wrap=True),
        Column("state", min_width=8, no_wrap=True),
        "agent",
        "call",
        "score",
        "expires",
        "reviewer",
        "flow run",
        title="approval requests",
    )
    for approval in found:
        table.add_row(
            approval.approval_id,
            approval.state.value,
            approval.agent_id,
            f"{approval.tool}.{approval.action}",
            f"{approval.gate_score:.2f}",
            _when(approval.expires_at),
            approval.decided_by or "-",
            approval.flow_run_id or "-",
        )
    cli_console().print(table)


@approvals_app.command("show")
def show(approval_id: IdArgument, as_json: JsonFlag = False) -> None:
    """Show everything a reviewer needs to judge one request."""
    _emit(_kernel().get_approval(approval_id), as_json)


def _resume(approval: Approval) -> bool:
    """Resume the Prefect run waiting on ``approval``, if one does; whether a run waits on it (none to resubmit)."""
    if approval.flow_run_id is None:
        return False
    import httpx
    from prefect.client.orchestration import get_client
    from prefect.exceptions import PrefectException
    from prefect.settings import PREFECT_API_URL

    from flows.holds import resume_run

    errors = cli_console(stderr=True, soft_wrap=True)
    if not PREFECT_API_URL.value():  # no server named: never start a temporary one on its database
        errors.print(
            f"flow run {approval.flow_run_id} waits on it: the colony-tick deployment resumes it "
            "(set PREFECT_API_URL to resume it at once)",
            highlight=False,
        )
        return True
    try:
        with get_client(sync_client=True) as client:
            run = client.read_flow_run(UUID(approval.flow_run_id))
            if client.read_flow(run.flow_id).name == AGENT_RUN_FLOW:  # ended held: a new run carries it on
                errors.print(
                    f"then: prefect deployment run agent-run/agent-run -p resume_from={approval.flow_run_id} "
                    "(with the same spec; the agent-run carries on with the kernel's decisions)",
                    highlight=False,
                )
                return True
            done = resume_run(client, approval, run=run)
    except (httpx.HTTPError, PrefectException, RuntimeError) as error:  # the run is left to the tick
        errors.print(
            f"flow run {approval.flow_run_id} waits on it but could not be resumed now ({error}); "
            "the colony-tick deployment resumes it",
            highlight=False,
        )
        return True
    errors.print(f"flow run {approval.flow_run_id}: {done}", highlight=False)
    return True


def _next_step(approval: Approval) -> str:
    """What carries an approved call on when no Prefect run waits: its held agent run, else a resubmission."""
    from colony.agents import HeldRun
    from colony.cli.agent import held_runs_directory

    held = HeldRun.waiting_on(held_runs_directory(), approval.approval_id)
    if held is not None:
        return f"approved: then colony agent resume {held} (the held agent run carries on)"
    return (
        f"approved: resubmit the call with approval id {approval.approval_id} "
        f"(colony tools call {approval.tool} ... --approval {approval.approval_id})"
    )


@approvals_app.command("approve")
def approve(
    approval_id: IdArgument, display_name: DisplayNameOption = None, note: NoteOption = "", as_json: JsonFlag = False
) -> None:
    """Approve a pending request: a Prefect run waiting on it resumes; any other caller resubmits with its id."""
    from colony.runtime import LOCAL_OPERATOR

    approval = _kernel().approve(approval_id, LOCAL_OPERATOR.agent_id, note, display_name=display_name)
    _emit(approval, as_json)
    if not _resume(approval) and not as_json:
        cli_console(stderr=True, soft_wrap=True).print(_next_step(approval), highlight=False)


@approvals_app.command("reject")
def reject(
    approval_id: IdArgument, display_name: DisplayNameOption = None, note: NoteOption = "", as_json: JsonFlag = False
) -> None:
    """Reject a pending request: the refusal is recorded against the agent that asked (a waiting run resumes)."""
    from colony.runtime import LOCAL_OPERATOR

    approval = _kernel().reject(approval_id, LOCAL_OPERATOR.agent_id, note, display_name=display_name)
    _emit(approval, as_json)
    _resume(approval)
