"""A console log handler that outlives its console, for flow runs whose worker dies.

A worker starts each flow run with stdout and stderr as pipes to itself. When the worker
dies the pipes break, and Prefect's console handler (rich) answers a broken pipe with
``SystemExit(1)``: the run crashed at its next log line although its API was still there.
This handler points both streams at the null device instead, so the run goes on and keeps
logging to the API. Deployments select it through Prefect's logging settings
(``PREFECT_LOGGING_HANDLERS_CONSOLE_CLASS``, see ``flows.deployments.FLOW_RUN_ENV``); Python
already ignores SIGPIPE, so a write to a broken pipe raises instead of killing the process.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from prefect.logging.handlers import PrefectConsoleHandler

__all__ = ["DetachableConsoleHandler"]

STANDARD_STREAMS = (1, 2)


class DetachableConsoleHandler(PrefectConsoleHandler):
    """Prefect's console handler, which detaches the process from a console that went away."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # rich's default exits the process; this one keeps it running.
        self.console.on_broken_pipe = self._console_lost  # type: ignore[method-assign]

    def handleError(self, record: logging.LogRecord) -> None:
        """A console that cannot be written to any more is detached; other errors as usual."""
        if isinstance(sys.exc_info()[1], OSError):
            self._console_lost()
            return
        super().handleError(record)

    def _console_lost(self) -> None:
        """Silence this handler and send whatever else writes to stdout/stderr to the null device."""
        self.console.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            for descriptor in STANDARD_STREAMS:
                os.dup2(devnull, descriptor)
        finally:
            os.close(devnull)
