"""``colony blocks``: register Colony's Prefect block types and save the kernel's block."""

from __future__ import annotations

import importlib
import os

import typer
from rich.console import Console

blocks_app = typer.Typer(no_args_is_help=True, help="Colony's Prefect blocks.")
console = Console()


@blocks_app.command("register")
def register() -> None:
    """Register every Colony block type (ColonyKernelConfig) with the configured Prefect API."""
    console.print(f"[green]✓[/green] registered {', '.join(register_block_types())}")


@blocks_app.command("save")
def save() -> None:
    """Register the block types and save this environment's kernel settings as the block flows load."""
    register_block_types()
    console.print(f"[green]✓[/green] saved the kernel's settings as block {save_kernel_block()!r}")


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


def save_kernel_block() -> str:
    """Save KernelSettings from this environment (COLONY_*) as the block flows load; its name."""
    from colony.kernel import KernelSettings

    module = importlib.import_module("blocks")
    name: str = os.environ.get("COLONY_KERNEL_BLOCK", module.DEFAULT_BLOCK_NAME)
    module.ColonyKernelConfig.from_settings(KernelSettings()).save(name, overwrite=True)
    return name
