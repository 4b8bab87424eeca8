"""A run that ends ``Failed`` on its own verdict is logged as that end, not as a crash.

Prefect's engine re-raises the ``Failed`` end of a deployment run as an exception, to log it
on the run's logger at ERROR ("Engine execution exited with unexpected exception"). The end
of a refused, rejected or expired action carries its summary, not an exception, so the
engine fails to turn it into one and logs that ``TypeError`` with its traceback, though the
run ended as it meant to and "Finished in state Refused(...)" is already logged. An
exception as the result would not help: the engine reports any ``Failed`` end, and Prefect's
JSON keeps only an exception's message, not the summary. This drops that one record, for a
run ``mark`` named; any other error of the run still logs.
"""

from __future__ import annotations

import logging
from uuid import UUID

__all__ = ["mark"]

_RUN_LOGGER = "prefect.flow_runs"
_STATES_MODULE = "prefect.states"


class _OwnVerdicts(logging.Filter):
    """Drops the engine's report of resolving a marked run's ``Failed`` end into an exception."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        run = getattr(record, "flow_run_id", None)
        if record.levelno < logging.ERROR or run not in self.runs or not record.exc_info:
            return True
        if not _resolving_a_state(record.exc_info[1]):
            return True
        self.runs.discard(run)
        return False


def _resolving_a_state(error: BaseException | None) -> bool:
    """Whether ``error`` is Prefect's TypeError for a failed state whose result is no exception."""
    if not isinstance(error, TypeError) or error.__traceback__ is None:
        return False
    frame = error.__traceback__
    while frame.tb_next is not None:
        frame = frame.tb_next
    return frame.tb_frame.f_globals.get("__name__") == _STATES_MODULE


_FILTER = _OwnVerdicts()


def mark(flow_run_id: UUID) -> None:
    """Note that the run ends ``Failed`` on its own verdict, so the engine's report of it is dropped."""
    logger = logging.getLogger(_RUN_LOGGER)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    _FILTER.runs.add(str(flow_run_id))
