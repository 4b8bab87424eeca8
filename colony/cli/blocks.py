"""``colony blocks``: register Colony's Prefect block type and save this environment's settings as its block.

The block carries this home's MCP servers and their pins too (``environment_settings``), so
every worker loading it serves the servers ``colony mcp-servers`` connected and pinned here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from colony.cli.failures import ColonyTyper
from colony.cli.output import cli_console
from colony.errors import SettingsError

if TYPE_CHECKING:
    from colony.settings import ColonySettings

blocks_app = ColonyTyper(no_args_is_help=True, help="Colony's Prefect blocks.")
console = cli_console()


@blocks_app.command("register")
def register() -> None:
    """Register every Colony block type (ColonyConfig) with the configured Prefect API."""
    console.print(f"[green]✓[/green] registered {', '.join(register_block_types())}")


@blocks_app.command("save")
def save() -> None:
    """Save this environment's settings (COLONY_*: kernel, gateway, sandbox, HPC; MCP servers and pins) as the block."""
    name = save_settings_block()
    console.print(f"[green]✓[/green] saved this environment's settings as the ColonyConfig block {name!r}")


def register_block_types() -> list[str]:
    """Register every block type ``blocks`` exports; their names."""
    from prefect.blocks.core import Block

    module = importlib.import_module("blocks")
    registered = []
    for name in module.__all__:
        value = getattr(module, name)
        if isinstance(value, type) and issubclass(value, Block):
            value.register_type_and_schema()
            registered.append(value.get_block_type_name())
    return registered


def save_settings_block(settings: ColonySettings | None = None) -> str:
    """Save ``settings`` (default: ``environment_settings()``) as the block commands and flows load; its name.

    Only a Prefect server named by PREFECT_API_URL is worth saving to: without one, no command
    or flow looks for the block.
    """
    from blocks import prefect_api_url, save_settings

    if prefect_api_url() is None:
        raise SettingsError("PREFECT_API_URL names no Prefect server: set it to the server every machine uses")
    return save_settings(settings or environment_settings())


def environment_settings() -> ColonySettings:
    """This environment's settings (COLONY_*) with this home's MCP servers file and pins declared in them."""
    from colony.settings import ColonySettings

    settings = ColonySettings.from_env()
    upstream = settings.upstream.declaring(settings.kernel.home.expanduser())
    return settings.model_copy(update={"upstream": upstream})
