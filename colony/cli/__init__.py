"""The ``colony`` command."""

from __future__ import annotations

from colony.cli.agent import agent_app
from colony.cli.approvals import approvals_app
from colony.cli.audit import audit_app
from colony.cli.blocks import blocks_app
from colony.cli.deploy import deploy
from colony.cli.failures import ColonyTyper, fail
from colony.cli.hpc import hpc_app
from colony.cli.kernel import kernel_app
from colony.cli.mcp_servers import mcp_servers_app
from colony.cli.output import quiet_prefect_drain
from colony.cli.policy import policy_app
from colony.cli.sandbox import sandbox_app
from colony.cli.serve import gateway, mcp
from colony.cli.tools import tools_app
from colony.cli.up import up
from colony.errors import ColonyError, KernelInputError
from colony.kernel import KernelSettings

app = ColonyTyper(no_args_is_help=True, help="Colony: a governed tool runtime for AI agents.")


@app.callback()
def _check_home() -> None:
    quiet_prefect_drain()
    # Every command first checks COLONY_HOME (when the kernel's SQLite file lives there): a home
    # that is a file, cannot be created or is read-only is one line, not a traceback mid-command.
    try:
        settings = KernelSettings.from_env()
    except KernelInputError:
        return  # a bad kernel variable is reported, naming it, by the command that needs the kernel
    try:
        if not settings.database_url:
            settings.checked_home()
    except ColonyError as error:  # a callback, not a command: rendered here, the way every command's error is
        raise fail(error) from None


app.add_typer(tools_app, name="tools")
app.add_typer(hpc_app, name="hpc")
app.add_typer(kernel_app, name="kernel")
app.add_typer(approvals_app, name="approvals")
app.add_typer(audit_app, name="audit")
app.add_typer(agent_app, name="agent")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(blocks_app, name="blocks")
app.add_typer(policy_app, name="policy")
app.add_typer(mcp_servers_app, name="mcp-servers")
app.command("up")(up)
app.command("deploy")(deploy)
app.command("mcp")(mcp)
app.command("gateway")(gateway)


def main() -> None:
    """Entry point of the console script."""
    app()
