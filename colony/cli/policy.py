"""``colony policy``: check, test and explain the operators' Cedar policies against this catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from colony.cli.failures import ColonyTyper, JsonFlag
from colony.errors import PolicyError

policy_app = ColonyTyper(no_args_is_help=True, help="The operators' Cedar policies (policies/*.cedar).")
DirOption = Annotated[
    Path | None,
    typer.Option("--dir", help="The policies directory (default: COLONY_POLICIES, else policies/ in the home)."),
]


def _loaded(directory: Path | None) -> tuple[Path, Any, dict[str, Any]]:
    """The directory, its policies compiled against the catalog, and the catalog's tool facts."""
    from colony.cli.settings import command_settings
    from colony.policy import compile_policies
    from colony.runtime import Catalog
    from colony.runtime.policies import tool_facts

    settings = command_settings()
    where = directory if directory is not None else settings.policy.resolved(settings.kernel.home)
    tools = {name: tool_facts(tool) for name, tool in Catalog().tools.items()}
    return where, compile_policies(where, tools.values()), tools


@policy_app.command("validate")
def validate(directory: DirOption = None, as_json: JsonFlag = False) -> None:
    """Parse every policy and check it against the schema generated from the catalog (exit 1 naming file:line)."""
    where, index, _ = _loaded(directory)
    if as_json:
        dormant = [source.id for source in index.dormant]
        typer.echo(
            json.dumps({"ok": True, "directory": str(where), "policies": sorted(index.sources), "dormant": dormant})
        )
        return
    typer.echo(f"{len(index.sources)} polic{'y' if len(index.sources) == 1 else 'ies'} valid in {where}")
    for source in index.dormant:
        typer.echo(f"dormant (names no tool of this catalog): {source.id} at {source.where}")


@policy_app.command("schema")
def schema() -> None:
    """Print the Cedar schema (JSON) the catalog gives policies: principals, one action per tool action, tools."""
    from colony.policy import catalog_schema
    from colony.runtime import Catalog
    from colony.runtime.policies import tool_facts

    typer.echo(json.dumps(catalog_schema(tool_facts(tool) for tool in Catalog().tools.values()), indent=2))


@policy_app.command("test")
def test(
    cases_file: Annotated[Path, typer.Argument(help="YAML or JSON list of cases (see colony.policy.cases).")],
    directory: DirOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Run each case (principal, tool, arguments, context -> expected decision); exit 1 if any disagrees."""
    from colony.policy.cases import decide_case, read_cases

    _, index, tools = _loaded(directory)
    cases = read_cases(cases_file)
    results = []
    for number, case in enumerate(cases, 1):
        decision = decide_case(index, tools, case)
        results.append(
            {"case": case.name or f"case {number}", "expected": case.expect.value, **decision.record()}
            | {"ok": decision.effect is case.expect}
        )
    failed = [result for result in results if not result["ok"]]
    if as_json:
        typer.echo(json.dumps({"ok": not failed, "cases": results}, indent=2))
    else:
        for result in results:
            mark = "ok  " if result["ok"] else "FAIL"
            by = ", ".join(result["policies"]) or "-"
            typer.echo(f"{mark} {result['case']}: {result['decision']} (expected {result['expected']}; by {by})")
        typer.echo(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(code=1)


@policy_app.command("explain")
def explain(
    tool: Annotated[str | None, typer.Argument(help="The tool of the request to explain.")] = None,
    arguments: Annotated[str, typer.Argument(help="The arguments as a JSON object.")] = "{}",
    action: Annotated[str | None, typer.Option(help="The action (default: the tool's main one).")] = None,
    agent: Annotated[str, typer.Option(help="The agent the call is judged as.")] = "local-operator",
    group: Annotated[list[str] | None, typer.Option("--group", help="A group of the caller (repeatable).")] = None,
    operator: Annotated[bool, typer.Option(help="Whether the caller is an operator.")] = False,
    at: Annotated[str | None, typer.Option(help="When (ISO 8601, default now).")] = None,
    proposal: Annotated[
        str | None, typer.Option(help="Explain a recorded call instead: its proposal id in the audit log.")
    ] = None,
    directory: DirOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Which policies decide a request (evaluated now), or decided a recorded call (read from the audit log)."""
    if proposal is not None:
        document = _recorded(proposal)
    elif tool is None:
        raise PolicyError("name a tool (and its arguments) or give --proposal ID")
    else:
        document = _evaluated(tool, arguments, action, agent, group or [], operator, at, directory)
    if as_json:
        typer.echo(json.dumps({"ok": True, **document}, indent=2))
        return
    typer.echo(f"{document['what']}: {document['decision']}")
    for policy, reason in zip(
        document["policies"], document["reasons"] or [""] * len(document["policies"]), strict=False
    ):
        typer.echo(f"  by {policy}" + (f": {reason}" if reason else ""))
    for applicable in document.get("applicable", []):
        typer.echo(f"  considered {applicable}")


def _evaluated(
    tool: str,
    arguments: str,
    action: str | None,
    agent: str,
    groups: list[str],
    operator: bool,
    at: str | None,
    directory: Path | None,
) -> dict[str, Any]:
    from colony.policy.cases import PolicyCase, decide_case

    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as error:
        raise PolicyError(f"arguments are not valid JSON: {error}") from None
    _, index, tools = _loaded(directory)
    case = PolicyCase.model_validate(
        {
            "principal": {"agent": agent, "groups": groups, "operator": operator},
            "tool": tool,
            "action": action,
            "arguments": parsed,
            "context": {"time": at},
            "expect": "permit",
        }
    )
    decision = decide_case(index, tools, case)
    facts = tools[tool]
    name = action or facts.primary
    return {
        "what": f"{tool}.{name} for {agent}",
        **decision.record(),
        "applicable": [source.where for source in index.applicable(f"{tool}.{name}")],
    }


def _recorded(proposal_id: str) -> dict[str, Any]:
    from colony.cli.settings import command_settings
    from colony.kernel import ColonyKernel

    kernel = ColonyKernel(command_settings().kernel)
    try:
        for entry in kernel.audit_entries():
            if entry.event == "propose" and entry.detail.get("proposal_id") == proposal_id:
                policy = entry.detail.get("policy") or {"decision": "permit", "policies": [], "reasons": []}
                return {"what": f"{entry.what} for {entry.on_behalf} (audit entry {entry.seq})", **policy}
    finally:
        kernel.close()
    raise PolicyError(f"no gate decision with proposal id {proposal_id!r} in the audit log")
