"""``colony kernel``: look at and drive the Colony kernel from a shell."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.table import Table

from colony.cli.failures import ColonyTyper, JsonFlag, fail
from colony.cli.output import cli_console
from colony.cli.settings import command_settings
from colony.kernel import ColonyKernel, ColonyStatus

kernel_app = ColonyTyper(no_args_is_help=True, help="The Colony kernel: gate, trust, budget, pheromones.")
console = cli_console()
FileArgument = Annotated[str, typer.Argument(help="A JSON file, or '-' for standard input.")]


def _read(source: str, as_json: bool) -> str:
    try:
        return sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as error:
        raise fail(f"cannot read {source}: {error.strerror or error}", as_json=as_json) from None


def _kernel() -> ColonyKernel:
    """The kernel the flows use: the settings block's when a Prefect server has one, else COLONY_*."""
    return ColonyKernel(command_settings().kernel)


def _show(result: BaseModel | dict[str, Any], as_json: bool) -> None:
    document = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
    if as_json:
        typer.echo(json.dumps(document, indent=2))
    else:
        console.print_json(json.dumps(document))


def _print_status(status: ColonyStatus) -> None:
    console.print(f"[bold]tick[/bold] {status.tick_count}   [bold]traces[/bold] "
                  f"{status.pheromone_summary.total_signals}   [bold]pruning candidates[/bold] "
                  f"{status.pruning_candidates_count}")  # fmt: skip
    budget = Table("dimension", "used", "reserved", "expired", "max", title="budget (this period)")
    for name, dimension in status.budget_usage.items():
        budget.add_row(name, *(f"{amount:g}" for amount in (dimension.used, dimension.reserved, dimension.expired,
                                                            dimension.max)))  # fmt: skip
    console.print(budget)
    roles = ", ".join(f"{role}: {count}" for role, count in status.role_distribution.items()) or "(no agents)"
    console.print(f"[bold]roles[/bold] {roles}")
    signals = Table("key", "strength", title="strongest signals")
    for signal in status.pheromone_summary.top_signals:
        signals.add_row(signal.key, f"{signal.strength:.3f}")
    console.print(signals)
    recent = Table("agent", "action", "target", "tests", "trust", title="recent consequences")
    for record in status.recent_consequences:
        recent.add_row(record.agent_id, record.action_type, record.target, str(record.tests_passed),
                       f"{record.trust_before:.3f} -> {record.trust_after:.3f}")  # fmt: skip
    console.print(recent)


@kernel_app.command("status")
def status(as_json: JsonFlag = False) -> None:
    """Show the colony's dashboard: tick, pheromones, budget, roles, recent consequences."""
    result = _kernel().status()
    if as_json:
        _show(result, as_json)
    else:
        _print_status(result)


@kernel_app.command("tick")
def tick(
    as_json: JsonFlag = False,
    key: Annotated[
        str | None, typer.Option("--key", help="The scheduled run's key: a tick with a key already applied is skipped.")
    ] = None,
) -> None:
    """Advance the colony one tick (evaporation and expiry) and show the status."""
    result = _kernel().tick(key)
    if as_json:
        _show(result, as_json)
    else:
        _print_status(result)


@kernel_app.command("profile")
def profile(agent: Annotated[str, typer.Argument(help="The agent's id.")], as_json: JsonFlag = False) -> None:
    """Show an agent's trust profile (reads only: an agent never seen shows the default SANDBOX profile)."""
    found = _kernel().agent_profile(agent)
    _show(found, as_json)


@kernel_app.command("trust")
def trust(
    agent: Annotated[str, typer.Argument(help="The agent's id (created when new).")],
    value: Annotated[
        float,
        typer.Argument(help="Its trust in [0, 1]; the role follows (0.25 repair_ant, 0.5 memory_ant, 0.7 dispatcher)."),
    ],
    as_json: JsonFlag = False,
) -> None:
    """Set an agent's trust, and so its role (an operator's override)."""
    _show(_kernel().set_trust(agent, value), as_json)


@kernel_app.command("falsify")
def falsify(plan_file: FileArgument, as_json: JsonFlag = False) -> None:
    """Attack a JSON plan with the ten falsification vectors."""
    text = _read(plan_file, as_json)
    _show(_kernel().falsify_plan(text), as_json)


@kernel_app.command("propose")
def propose(proposal_file: FileArgument, as_json: JsonFlag = False) -> None:
    """Submit a JSON proposal (colony_propose_action's input) to the gate."""
    text = _read(proposal_file, as_json)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise fail(f"{proposal_file} is not valid JSON: {error}", as_json=as_json) from None
    if not isinstance(document, dict):
        raise fail(f"{proposal_file} must hold a JSON object", as_json=as_json)
    if "acted_by" in document:
        raise fail(
            f"{proposal_file}: acted_by is not a proposal's field: the CLI acts as the local operator", as_json=as_json
        )
    from colony.runtime import LOCAL_OPERATOR

    if document.get("agent_id") != LOCAL_OPERATOR.agent_id:  # the audit log names who ran the command
        document["acted_by"] = LOCAL_OPERATOR.agent_id
    _show(_kernel().propose_action(document), as_json)


@kernel_app.command("pruning")
def pruning(as_json: JsonFlag = False) -> None:
    """Nominate modules worth pruning, from the DEPENDENCY traces (advisory)."""
    _show(_kernel().pruning_report(), as_json)
