"""Only the engine's report of a run's own ``Failed`` verdict is dropped; every other error of a run still logs.

The records are made as Prefect's engine makes them: its own TypeError for a failed state
whose result is a summary, logged on the run's logger (kept off the API: no run exists).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest
from prefect.logging.loggers import flow_run_logger
from prefect.states import Failed, get_state_exception

from flows._verdicts import mark
from flows.results import GatedActionSummary, Outcome

ENGINE_REPORT = "Engine execution exited with unexpected exception"


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def kept() -> Iterator[Kept]:
    """What the run logger passes on to its handlers (the API's and the console's)."""
    handler = Kept()
    logger = logging.getLogger("prefect.flow_runs")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def unresolvable() -> TypeError:
    """Prefect's error for a refused run's end: its result, a summary, is no exception."""
    with pytest.raises(TypeError) as raised:
        get_state_exception(Failed(name="Refused", data=GatedActionSummary(outcome=Outcome.REFUSED)))
    return raised.value


def engine_reports(run: UUID, error: BaseException) -> None:
    flow_run_logger(flow_run_id=run, send_to_api=False).error(ENGINE_REPORT, exc_info=error)


def test_the_engine_report_of_a_run_ended_on_its_own_verdict_is_dropped(kept: Kept) -> None:
    run = uuid4()
    mark(run)
    engine_reports(run, unresolvable())
    assert kept.records == []


def test_a_crash_of_a_run_ended_on_its_own_verdict_still_logs(kept: Kept) -> None:
    run = uuid4()
    mark(run)
    try:
        raise RuntimeError("the API went away while the end was being set")
    except RuntimeError as crash:
        engine_reports(run, crash)
    [record] = kept.records
    assert record.levelno == logging.ERROR and record.getMessage() == ENGINE_REPORT


def test_the_same_report_for_a_run_not_ended_by_its_verdict_still_logs(kept: Kept) -> None:
    mark(uuid4())
    engine_reports(uuid4(), unresolvable())
    [record] = kept.records
    assert record.exc_info is not None and isinstance(record.exc_info[1], TypeError)
