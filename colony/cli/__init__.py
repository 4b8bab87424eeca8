"""The ``colony`` command."""

from __future__ import annotations

import typer

from colony.cli.approvals import approvals_app
from colony.cli.blocks import blocks_app
from colony.cli.hpc import hpc_app
from colony.cli.kernel import kernel_app
from colony.cli.sandbox import sandbox_app
from colony.cli.serve import gateway, mcp
from colony.cli.tools import tools_app
from colony.cli.up import up

app = typer.Typer(no_args_is_help=True, help="Colony: a governed tool runtime for AI agents.")
app.add_typer(tools_app, name="tools")
app.add_typer(hpc_app, name="hpc")
app.add_typer(kernel_app, name="kernel")
app.add_typer(approvals_app, name="approvals")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(blocks_app, name="blocks")
app.command("up")(up)
app.command("mcp")(mcp)
app.command("gateway")(gateway)


def main() -> None:
    """Entry point of the console script."""
    app()
