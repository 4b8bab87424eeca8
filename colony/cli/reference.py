"""The ``colony`` command as a click command: what the documentation's CLI reference renders (mkdocs-click)."""

from __future__ import annotations

import typer

from colony.cli import app

__all__ = ["command"]

command = typer.main.get_command(app)
