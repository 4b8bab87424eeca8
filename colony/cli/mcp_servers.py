"""``colony mcp-servers``: connect third-party MCP servers, review and pin their tools' definitions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from colony.cli.failures import ColonyTyper, JsonFlag
from colony.cli.output import cli_console
from colony.errors import McpServersFileError
from colony.kernel import ActionKind, KernelSettings
from colony.kernel.actions import classify_action
from colony.secrets import env_var_for, missing_secrets
from colony.spec import SecretRequirement
from colony.upstream import (
    McpServers,
    PinStore,
    Review,
    StdioServer,
    catalog_name,
    pins_path,
    save_servers,
    servers_path,
)
from colony.upstream.config import ServerConfig, load_servers, parse_servers, secret_kinds
from colony.upstream.pins import suspicious_text

mcp_servers_app = ColonyTyper(
    no_args_is_help=True, help="Third-party MCP servers whose tools Colony governs (the mcpServers file)."
)
console = cli_console()


def _home() -> Path:
    return KernelSettings.from_env().checked_home()


def _servers() -> tuple[Path, McpServers]:
    path = servers_path(_home())
    return path, load_servers(path)


def _server(name: str) -> ServerConfig:
    path, servers = _servers()
    config = servers.servers.get(name)
    if config is None:
        known = ", ".join(sorted(servers.servers)) or "none"
        raise McpServersFileError(f"{path}: no MCP server {name!r} (configured: {known})")
    return config


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key:
            raise McpServersFileError(f"{what} {value!r} is not KEY=VALUE")
        pairs[key] = item
    return pairs


async def _listed(name: str, config: ServerConfig) -> list[dict[str, Any]]:
    from colony.upstream.connections import UpstreamServer  # the MCP SDK, only for a command that connects

    server = UpstreamServer(name, config, on_listed=lambda server, _tools: Review(server=server))
    try:
        return await server.list_tools()
    except TimeoutError:
        raise McpServersFileError(f"MCP server {name!r} did not list its tools within {config.timeout:g} s") from None
    finally:
        await server.aclose()


def judged(definition: Mapping[str, Any]) -> list[str]:
    """What an operator should judge before pinning: text that reads like instructions, and trusted claims.

    ``readOnlyHint: true`` runs a tool without the gate, so a tool claiming it under a name that
    reads as destructive (``delete_repository``) waits for ``--accept`` like injected text.
    """
    found = suspicious_text(definition)
    annotations = definition.get("annotations")
    name = str(definition.get("name") or "")
    claims_read_only = isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True
    if claims_read_only and classify_action(name) is ActionKind.DESTRUCTIVE:
        found.append(
            f"readOnlyHint: true, but its name {name!r} reads as a destructive action: pinned, it runs without the gate"
        )
    return found


def _show_review(review: Review, pinned_now: bool) -> None:
    for tool, diff in review.changed.items():
        console.print(f"[yellow]changed[/yellow] {escape(tool)} (out of service until re-pinned):")
        console.print(escape(diff), highlight=False)
    for tool, passages in review.flagged.items():
        console.print(f"[red]flagged[/red] {escape(tool)}: its definition says what you should judge first:")
        for passage in passages:
            console.print(f"  {escape(passage)}", highlight=False)
        console.print(f"  pin it only if you trust it: --accept {escape(tool)}")
    for tool in review.oversized:
        console.print(f"[red]refused[/red] {escape(tool)}: its definition is over the size cap")
    verb = "pinned" if pinned_now else "new (not served until pinned)"
    for tool in review.added:
        if tool not in review.flagged and tool not in review.oversized:
            console.print(f"[green]{verb}[/green] {escape(tool)}")
    for tool in review.removed:
        console.print(f"[yellow]removed[/yellow] {escape(tool)} (no longer listed by the server)")


@mcp_servers_app.command("list")
def list_servers(as_json: JsonFlag = False) -> None:
    """List the configured servers, their transport, their pinned tools and missing secrets."""
    path, servers = _servers()
    pins = PinStore(pins_path(_home())).servers()
    rows: list[dict[str, Any]] = []
    for name, config in sorted(servers.servers.items()):
        kinds = secret_kinds(config)
        missing = missing_secrets(SecretRequirement(name=kind, purpose="MCP server") for kind in kinds)
        rows.append(
            {
                "name": name,
                "transport": "stdio" if isinstance(config, StdioServer) else "http",
                "target": " ".join([config.command, *config.args]) if isinstance(config, StdioServer) else config.url,
                "disabled": config.disabled,
                "tools": sorted(catalog_name(name, tool) for tool in pins.get(name, {})),
                "missing_secrets": [env_var_for(kind) for kind in missing],
            }
        )
    if as_json:
        typer.echo(json.dumps({"file": str(path), "servers": rows}, indent=2))
        return
    table = Table("name", "transport", "target", "pinned tools", "status", title=str(path))
    for row in rows:
        status = "disabled" if row["disabled"] else "ok"
        if row["missing_secrets"]:
            status = f"[red]set {', '.join(row['missing_secrets'])}[/red]"
        table.add_row(row["name"], row["transport"], escape(row["target"]), str(len(row["tools"])), status)
    console.print(table)


@mcp_servers_app.command("add")
def add_server(
    name: Annotated[str, typer.Argument(help="The server's name in Colony: its tools are <name>__<tool>.")],
    command: Annotated[str | None, typer.Option("--command", help="A stdio server's program.")] = None,
    args: Annotated[list[str] | None, typer.Option("--arg", help="An argument of the program (repeat).")] = None,
    env: Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE; ${secret:KIND} for secrets.")] = None,
    cwd: Annotated[str | None, typer.Option("--cwd", help="A stdio server's working directory.")] = None,
    url: Annotated[str | None, typer.Option("--url", help="A streamable HTTP server's endpoint.")] = None,
    headers: Annotated[list[str] | None, typer.Option("--header", help="KEY=VALUE; ${secret:KIND}.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds a call may take.")] = 30.0,
    start_timeout: Annotated[
        float, typer.Option("--start-timeout", help="Seconds its start and MCP handshake may take.")
    ] = 60.0,
    accept: Annotated[list[str] | None, typer.Option("--accept", help="Pin this flagged tool anyway.")] = None,
    no_pin: Annotated[bool, typer.Option("--no-pin", help="Only write the file; pin later.")] = False,
) -> None:
    """Add a server to the file, then connect and pin what it lists (flagged text needs --accept)."""
    path, servers = _servers()
    if name in servers.servers:
        raise McpServersFileError(f"{path}: MCP server {name!r} is already configured (remove it first)")
    if (command is None) == (url is None):
        raise McpServersFileError("give either --command (a stdio server) or --url (a streamable HTTP server)")
    limits = {"timeout": timeout, "start_timeout": start_timeout}
    raw: dict[str, Any] = (
        {"command": command, "args": args or [], "env": _pairs(env or [], "--env"), "cwd": cwd, **limits}
        if command is not None
        else {"url": url, "headers": _pairs(headers or [], "--header"), **limits}
    )
    updated = parse_servers({"mcpServers": {**servers.dump()["mcpServers"], name: raw}}, "the new server")
    save_servers(updated, path)
    console.print(f"added MCP server {name!r} to {path}")
    if not no_pin:
        _pin(name, updated.servers[name], None, accept or [])


@mcp_servers_app.command("remove")
def remove_server(name: Annotated[str, typer.Argument(help="The server to remove.")]) -> None:
    """Remove a server and its pins; its tools leave the catalog."""
    _server(name)
    path, servers = _servers()
    document = servers.dump()
    document["mcpServers"].pop(name)
    save_servers(parse_servers(document, str(path)), path)
    PinStore(pins_path(_home())).forget(name)
    console.print(f"removed MCP server {name!r}")


@mcp_servers_app.command("tools")
def server_tools(name: Annotated[str, typer.Argument(help="The server.")], as_json: JsonFlag = False) -> None:
    """Connect and compare what the server lists now with its pins (changes shown as diffs)."""
    config = _server(name)
    listed = asyncio.run(_listed(name, config))
    review = PinStore(pins_path(_home())).review(name, listed, judge=judged)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "server": name,
                    "unchanged": list(review.unchanged),
                    "changed": review.changed,
                    "new": list(review.added),
                    "removed": list(review.removed),
                    "flagged": review.flagged,
                },
                indent=2,
            )
        )
        return
    for tool in review.unchanged:
        console.print(f"[green]pinned[/green] {escape(tool)}")
    _show_review(review, pinned_now=False)


@mcp_servers_app.command("pin")
def pin_server(
    name: Annotated[str, typer.Argument(help="The server.")],
    tools: Annotated[list[str] | None, typer.Option("--tool", help="Pin only this tool (repeat).")] = None,
    accept: Annotated[list[str] | None, typer.Option("--accept", help="Pin this flagged tool anyway.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before pinning changed definitions.")] = False,
) -> None:
    """Review what the server lists now and pin it: changed tools return to service, new ones appear."""
    config = _server(name)
    store = PinStore(pins_path(_home()))
    listed = asyncio.run(_listed(name, config))
    review = store.review(name, listed, judge=judged)
    if review.changed and not yes:
        _show_review(review, pinned_now=False)
        typer.confirm("pin these definitions?", abort=True)
    _pin(name, config, tools, accept or [], listed=listed)


def _pin(
    name: str,
    config: ServerConfig,
    tools: list[str] | None,
    accept: list[str],
    *,
    listed: list[dict[str, Any]] | None = None,
) -> None:
    if listed is None:
        listed = asyncio.run(_listed(name, config))
    review = PinStore(pins_path(_home())).pin(name, listed, only=tools, accept_flagged=accept, judge=judged)
    _show_review(review, pinned_now=True)
    for tool in review.changed:
        console.print(f"[green]re-pinned[/green] {escape(tool)}")
    unaccepted = sorted(set(review.flagged) - set(accept))
    if unaccepted:
        console.print(f"[red]not pinned (flagged):[/red] {escape(', '.join(unaccepted))}")
