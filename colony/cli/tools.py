"""``colony tools``: list, show, call, check and document the catalog's tools."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from colony.catalog import ToolEntry, check_entry, get_entry, load_registry, resolve_capability, save_registry
from colony.cli.failures import ColonyTyper, JsonFlag, fail
from colony.cli.output import cli_console
from colony.docs import render_tools_reference
from colony.errors import ColonyError
from colony.telemetry.surfaces import surface_span

if TYPE_CHECKING:
    from colony.runtime import CallOutcome

tools_app = ColonyTyper(no_args_is_help=True, help="The tool catalog.")
console = cli_console()


@tools_app.command("list")
def list_tools(as_json: JsonFlag = False) -> None:
    """List the catalog's tools (stubs included, marked; an entry that fails to load marked unavailable, with why)."""
    entries = load_registry()
    problems = {name: _problem(entry) for name, entry in entries.items()}
    if as_json:
        listing = [
            entry.model_dump(mode="json") | {"available": problems[name] is None, "reason": problems[name]}
            for name, entry in entries.items()
        ]
        typer.echo(json.dumps(listing, indent=2))
        return
    table = Table("name", "capability", "purpose", "implementation", "status")
    for name, entry in entries.items():
        problem = problems[name]
        status = "stub" if entry.is_stub else "ok" if problem is None else f"[red]unavailable:[/red] {escape(problem)}"
        table.add_row(name, entry.capability, entry.purpose, entry.capability_fqn or "(stub)", status)
    console.print(table)


def _problem(entry: ToolEntry) -> str | None:
    """Why the entry does not load (its class is missing, raises at import, or disagrees with it), or None."""
    try:
        check_entry(entry)
    except ColonyError as error:
        return str(error)
    return None


@tools_app.command("show")
def show_tool(name: str, as_json: JsonFlag = False) -> None:
    """Show a tool's planner card, action schemas and preconditions."""
    cls = resolve_capability(get_entry(name, load_registry()))
    capability = cls()
    preconditions = asyncio.run(capability.invoke("check_preconditions"))
    actions = [
        {
            "name": d.name,
            "description": d.description,
            "input_schema": d.input_schema,
            "side_effecting": d.side_effecting,
        }
        for d in capability.get_action_descriptions()
    ]
    if as_json:
        document = {
            "spec": cls.spec.model_dump(mode="json"),
            "card": capability.get_action_group_description(),
            "actions": actions,
            "preconditions": preconditions,
        }
        typer.echo(json.dumps(document, indent=2))
        return
    console.print(capability.get_action_group_description(), highlight=False)
    for action in actions:
        console.print(f"\n[bold]{action['name']}[/bold]")
        console.print_json(json.dumps(action["input_schema"]))
    console.print("\n[bold]preconditions[/bold]")
    console.print_json(json.dumps(preconditions))


@tools_app.command("call")
def call_tool(
    name: str,
    arguments: Annotated[str, typer.Argument(help="The arguments as a JSON object.")] = "{}",
    action: Annotated[str | None, typer.Option(help="Action to run (default: the tool's main one).")] = None,
    agent: Annotated[
        str | None, typer.Option(help="The agent this call acts for (its trust and budget are what the gate weighs).")
    ] = None,
    rationale: Annotated[
        str | None, typer.Option(help="Why the call is necessary (needed for a governed tool; 20+ characters).")
    ] = None,
    rollback_plan: Annotated[
        str | None, typer.Option(help="How to undo the call's effect (the gate reads it).")
    ] = None,
    evidence: Annotated[
        str | None, typer.Option(help='Supporting evidence as a JSON object, e.g. \'{"tests": ["t1"]}\'.')
    ] = None,
    approval: Annotated[
        str | None,
        typer.Option("--approval", help="Resubmit a held call with its approval id (it runs once approved)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run one action of a tool through the governed pipeline, printing its result as JSON.

    A side-effecting tool is proposed to the kernel's gate first, as --agent, and runs only on EXECUTE.
    A held call prints its approval id and exits 2: approve it (`colony approvals approve ID`), then
    run the same command again with `--approval ID`.
    """
    from colony.cli.settings import serving_settings, settings_runtime
    from colony.runtime import LOCAL_OPERATOR, CallRequest, CallStatus, wire

    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as error:
        raise fail(f"arguments are not valid JSON: {error}", as_json=as_json) from None
    try:
        case = json.loads(evidence) if evidence is not None else None
    except json.JSONDecodeError as error:
        raise fail(f"--evidence is not valid JSON: {error}", as_json=as_json) from None
    # the case is read as every surface reads it: a bad one is an error naming the option's field
    request = CallRequest(
        tool=name,
        arguments=parsed,
        action=action,
        agent_id=agent,
        rationale=rationale,
        rollback_plan=rollback_plan,
        evidence=case,
        approval_id=approval,
    )

    settings = serving_settings()

    async def run() -> Any:
        runtime = settings_runtime(settings)
        try:
            with surface_span(f"colony tools call {request.tool}", "cli"):
                return await runtime.call(request, LOCAL_OPERATOR)
        finally:
            await runtime.aclose()

    outcome = asyncio.run(run())
    if outcome.status is CallStatus.HELD and outcome.approval:
        raise _held(outcome.approval.to_dict(), wire(outcome.verdict) or {}, as_json)
    outcome.raise_for_status()
    if as_json:
        document: dict[str, Any] = {"ok": True, "result": outcome.result}
        if outcome.governed:
            document |= {"verdict": wire(outcome.verdict), "outcome": wire(outcome.record)}
        typer.echo(json.dumps(document, indent=2))
        return
    if outcome.governed:
        cli_console(stderr=True, soft_wrap=True).print(_gate_line(outcome), highlight=False)
    typer.echo(json.dumps(outcome.result, indent=2))


def _gate_line(outcome: CallOutcome) -> str:
    """What the gate decided about a call that ran: an approved hold ran because a person approved it."""
    who = outcome.acting.describe()
    if outcome.approval is not None and outcome.approval.approved:
        return f"gate: executed, approved by {outcome.approval.decided_by} for {who}"
    return f"gate: {outcome.verdict.decision if outcome.verdict is not None else None} for {who}"


def _held(approval: dict[str, Any], verdict: dict[str, Any], as_json: bool) -> typer.Exit:
    """Tell the caller the call waits for a person, and how to go on; exit 2."""
    if as_json:
        typer.echo(json.dumps({"ok": False, "status": "held", "approval": approval, "verdict": verdict}, indent=2))
        return typer.Exit(code=2)
    approval_id = approval["approval_id"]
    expires = datetime.fromtimestamp(approval["expires_at"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    for line in (
        f"held: {approval['reason']}",
        f"approval {approval_id} is {approval['state']} until {expires}",
        f"  approve: colony approvals approve {approval_id} --note '...'",
        f"  then run this command again with --approval {approval_id}",
    ):
        typer.echo(line, err=True)
    return typer.Exit(code=2)


@tools_app.command("check")
def check_tools() -> None:
    """Check every entry imports and agrees with its spec; exit 1 with the reasons if not."""
    problems = [problem for entry in load_registry().values() if (problem := _problem(entry)) is not None]
    if not problems:
        from colony.surfaces.pinning import PinState, check_pins

        for status in check_pins(load_registry()):
            if status.state.is_error:
                problems.append(status.message)
            elif status.state is not PinState.PINNED:
                console.print(f"[yellow]![/yellow] {status.message}", highlight=False)
    if problems:
        for problem in problems:
            cli_console(stderr=True).print(f"[red]✗[/red] {problem}", highlight=False)
        raise typer.Exit(code=1)
    console.print("[green]✓[/green] every catalog entry resolves, matches its spec and its definition pin")


@tools_app.command("pin")
def pin_tools() -> None:
    """Record each tool's version and served-definition hash in the catalog, for `colony tools check`."""
    from colony.surfaces.pinning import pin_entries

    entries = pin_entries(load_registry())
    save_registry(entries)
    for name, entry in sorted(entries.items()):
        pin = entry.extra.get("definition_pin")
        if pin:
            typer.echo(f"{name} v{pin['version']}: {pin['sha256']}")


@tools_app.command("docs")
def write_docs(
    output: Annotated[Path | None, typer.Option(help="Write here instead of standard output.")] = None,
) -> None:
    """Print the tools reference (the documentation site's Tools page) generated from the catalog."""
    text = render_tools_reference(load_registry())
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
