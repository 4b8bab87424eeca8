"""``colony blocks``: register Colony's Prefect block types with the Prefect API."""

from __future__ import annotations

import importlib

import typer
from rich.console import Console

blocks_app = typer.Typer(no_args_is_help=True, help="Colony's Prefect blocks.")
console = Console()


@blocks_app.command("register")
def register() -> None:
    """Register every Colony block type (ColonyKernelConfig) with the configured Prefect API."""
    from prefect.blocks.core import Block

    module = importlib.import_module("blocks")
    registered = []
    for name in module.__all__:
        value = getattr(module, name)
        if isinstance(value, type) and issubclass(value, Block):
            value.register_type_and_schema()
            registered.append(value.get_block_type_name())
    console.print(f"[green]✓[/green] registered {', '.join(registered)}")
