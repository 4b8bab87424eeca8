"""How a command fails: one table of exit codes, one rendering, applied to every command at once.

Every ``colony`` command is a ``ColonyCommand`` (``ColonyTyper`` makes them): a
ColonyError a command raises ends it here, rendered by ``fail`` and exiting with
its row's code: the message on stderr after ``error:``, or with ``--json`` the
error's fields as ``{"ok": false, "error": {...}}`` on stdout. A command that
refuses its own input (a file that is not JSON, say) calls ``fail`` with the message.
A held call or run is no error: it exits 2 where it is answered.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from colony.cli.output import cli_console
from colony.errors import ColonyError, PolicyDeniedError

__all__ = ["EXIT_CODES", "ColonyCommand", "ColonyTyper", "JsonFlag", "exit_code", "fail"]

EXIT_CODES: dict[type[ColonyError], int] = {ColonyError: 1, PolicyDeniedError: 3}
"""Error class -> exit code; a class takes its nearest ancestor's row (an operator's policy forbidding: 3)."""


def exit_code(error: ColonyError) -> int:
    """The exit code of ``error``: its class's row, or its nearest ancestor's."""
    return next(EXIT_CODES[kind] for kind in type(error).__mro__ if kind in EXIT_CODES)


def fail(error: ColonyError | str, *, as_json: bool = False) -> typer.Exit:
    """Render ``error`` (as JSON on stdout with ``as_json``, else on stderr) and return the Exit to raise."""
    payload = error.to_dict() if isinstance(error, ColonyError) else {"type": "Error", "message": error}
    if as_json:
        typer.echo(json.dumps({"ok": False, "error": payload}))
    else:
        cli_console(stderr=True).print(f"[red]error:[/red] {payload['message']}", highlight=False, soft_wrap=True)
    return typer.Exit(code=exit_code(error) if isinstance(error, ColonyError) else 1)


class ColonyCommand(TyperCommand):
    """A command whose ColonyError is rendered by ``fail`` (as JSON when the command was given ``--json``)."""

    def invoke(self, ctx: Any) -> Any:  # typer's own click.Context, which typer does not export
        try:
            return super().invoke(ctx)
        except ColonyError as error:
            raise fail(error, as_json=bool(ctx.params.get("as_json"))) from None


class ColonyTyper(typer.Typer):
    """A Typer app whose commands are ColonyCommands."""

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **options: Any) -> Any:
        return super().command(name, cls=cls or ColonyCommand, **options)


JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
"""The ``--json`` option: a command's output, and its failure, as JSON (a command names it ``as_json``)."""
