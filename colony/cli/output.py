"""How the CLI writes: consoles that do not wrap tables at 80 columns when piped, and no Prefect drain chatter.

Off a terminal rich assumes 80 columns and folds tables and long lines; a script
reading ``colony ... | grep`` wants each row on one line, so a piped console is
wide (``COLUMNS`` still decides when set). At exit Prefect's event and log
workers warn "Still processing items" while they drain: progress, not a problem,
so the CLI leaves it out (a queue that drops items still warns).
"""

from __future__ import annotations

import logging
import os

from rich.console import Console

__all__ = ["PIPED_WIDTH", "cli_console", "quiet_prefect_drain"]

PIPED_WIDTH = 1000
_DRAINING_SERVICES = ("APILogWorker", "EventsWorker")


def cli_console(*, stderr: bool = False, soft_wrap: bool = False) -> Console:
    """A console for the CLI: the terminal's width on a terminal, wide when piped."""
    if Console(stderr=stderr).is_terminal or os.environ.get("COLUMNS"):
        return Console(stderr=stderr, soft_wrap=soft_wrap)
    return Console(stderr=stderr, soft_wrap=soft_wrap, width=PIPED_WIDTH)


class _NoDrainProgress(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Still processing items")


def quiet_prefect_drain() -> None:
    """Drop Prefect's "Still processing items" warnings (its workers log under their class names)."""
    for name in _DRAINING_SERVICES:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, _NoDrainProgress) for existing in logger.filters):
            logger.addFilter(_NoDrainProgress())
