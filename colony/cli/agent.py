"""``colony agent``: what a model is shown, a model loop over Colony's tools, and resuming a held run.

A run acts as the agent its spec names (its own principal: exactly its tools' capability
tokens), never as this machine's operator. A run that ends on held calls is kept under
``COLONY_HOME/agent-runs/`` (exit status 2) until someone decides them (``colony
approvals approve|reject``) and ``colony agent resume`` carries it on.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from colony.cli.failures import ColonyTyper, JsonFlag, fail
from colony.cli.output import cli_console
from colony.cli.settings import serving_settings, settings_runtime
from colony.errors import ColonyError
from colony.kernel import KernelSettings

if TYPE_CHECKING:
    from colony.agents import Agent

# colony.agents (and pydantic-ai with it) is imported by the agent commands only: every other
# `colony` command, and the servers it starts, would otherwise pay for importing it.

agent_app = ColonyTyper(no_args_is_help=True, help="Agents: what the model sees, the model loop, held runs.")
console = cli_console()
err = cli_console(stderr=True)
SpecArgument = Annotated[Path, typer.Argument(help="The agent's spec file (YAML or JSON).")]


def _assemble(spec_path: Path) -> Agent:
    from colony.agents import assemble, load_agent_spec

    return assemble(load_agent_spec(spec_path), settings_runtime(serving_settings()))


def held_runs_directory() -> Path:
    """Where ``colony agent run`` keeps held runs until they are resumed."""
    return KernelSettings.from_env().checked_home() / "agent-runs"  # a path on this machine, never in a block


@agent_app.command("show")
def show(spec: SpecArgument, as_json: JsonFlag = False) -> None:
    """Print what the model is shown: each tool's name, description and input schema, and how it is governed."""
    agent = _assemble(spec)
    tools = [
        {
            "name": entry.name,
            "action_id": entry.action_id,
            "description": entry.description,
            "input_schema": entry.input_schema,
            "governed": agent.governed(entry),
            "needs_approval": entry.needs_approval,
            "retries": agent.retries(entry),
        }
        for entry in agent.menu()
    ]
    if as_json:
        typer.echo(json.dumps({"agent": agent.name, "model": agent.spec.model, "tools": tools}, indent=2))
        return
    console.print(f"[bold]agent[/bold] {agent.name}   [bold]model[/bold] {agent.spec.model or '(COLONY_MODEL)'}")
    for tool in tools:
        flags = ", ".join(
            flag for flag, on in (("gated", tool["governed"]), ("needs approval", tool["needs_approval"])) if on
        )
        console.rule(f"{tool['name']}  ({tool['action_id']}; retries {tool['retries']}{'; ' + flags if flags else ''})")
        console.print(tool["description"], highlight=False, markup=False)
        console.print_json(json.dumps(tool["input_schema"]))


def _finish(agent: Agent, result: Any, spec_path: str | None, as_json: bool) -> None:
    """Print the answer, or keep the held run and say how to decide and resume it (exit 2)."""
    from pydantic_ai import DeferredToolRequests

    from colony.agents import HeldRun

    output = result.output
    if not isinstance(output, DeferredToolRequests):
        typer.echo(json.dumps({"ok": True, "output": output}) if as_json else output)
        return
    held = HeldRun.of(agent.name, result.all_messages(), output, spec_path)
    held.save(held_runs_directory())
    if as_json:
        typer.echo(json.dumps({"ok": False, "held_run": held.run_id, "approvals": held.approval_ids}))
    else:
        err.print(f"[yellow]held:[/yellow] the run waits for a person (held run {held.run_id})", highlight=False)
        for approval_id in held.approval_ids:
            err.print(f"  colony approvals approve {approval_id} --note '...'   (or reject)", highlight=False)
        err.print(f"then: colony agent resume {held.run_id}", highlight=False)
    raise typer.Exit(code=2)


@agent_app.command("run")
def run_agent(
    spec: SpecArgument,
    prompt: Annotated[str, typer.Argument(help="What to ask the agent.")],
    as_json: JsonFlag = False,
) -> None:
    """Run the model loop on the spec's model (or COLONY_MODEL); every tool call goes through Colony's gate."""
    from colony.agents import run

    agent = _assemble(spec)

    async def go() -> Any:
        try:
            return await run(agent, prompt)
        finally:
            await agent.runtime.aclose()

    result = asyncio.run(go())
    _finish(agent, result, str(spec), as_json)


@agent_app.command("resume")
def resume(
    run_id: Annotated[str, typer.Argument(help="The held run's id (printed by `colony agent run`).")],
    spec: Annotated[
        Path | None, typer.Option("--spec", help="The spec file, if not the one the run started from.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Carry on a held run with the kernel's decisions: approved calls run (once), rejected ones answer so."""
    from colony.agents import HeldRun, decisions, run

    held = HeldRun.load(held_runs_directory(), run_id)
    spec_path = spec or (Path(held.spec_path) if held.spec_path else None)
    if spec_path is None:
        raise fail(ColonyError(f"held run {run_id} names no spec file: pass --spec"))
    agent = _assemble(spec_path)
    if agent.name != held.agent:
        raise fail(ColonyError(f"held run {run_id} is agent {held.agent!r}'s, not {agent.name!r}'s"))

    async def go() -> Any:
        try:
            results = await decisions(agent, held.deferred())
            return await run(agent, None, message_history=held.history(), deferred_tool_results=results)
        finally:
            await agent.runtime.aclose()

    result = asyncio.run(go())
    (held_runs_directory() / f"{run_id}.json").unlink(missing_ok=True)
    _finish(agent, result, str(spec_path), as_json)
