"""The ``colony`` command."""

from __future__ import annotations

import typer

from colony.cli.kernel import kernel_app
from colony.cli.serve import gateway, mcp
from colony.cli.tools import tools_app

app = typer.Typer(no_args_is_help=True, help="Colony: a governed tool runtime for AI agents.")
app.add_typer(tools_app, name="tools")
app.add_typer(kernel_app, name="kernel")
app.command("mcp")(mcp)
app.command("gateway")(gateway)


def main() -> None:
    """Entry point of the console script."""
    app()
