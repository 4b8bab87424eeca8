"""Where Colony's task and flow results (and so cache entries) are kept, and how: as JSON.

``COLONY_RESULT_STORAGE`` names a Prefect storage block (``s3-bucket/colony-results``)
when workers on several machines must share results; otherwise results go to
``results/`` under ``COLONY_HOME``, so a cache hit survives a restart of the process.
Every result is written with Prefect's JSON serializer, never pickle: a result reader
gets data, not code to run. The location is read when a result is written (not when a
module is imported), so it follows the process's configuration.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from prefect.results import ResultRecord, ResultStore, resolve_result_storage
from prefect.serializers import JSONSerializer

from colony.kernel import KernelSettings

__all__ = ["RESULT_SERIALIZER", "persisted", "result_location", "result_storage", "storage_for"]

RESULT_SERIALIZER = "json"
_BLOCK_PREFIX = "block:"


def result_location() -> str:
    """``block:<slug>`` when a storage block is configured, else the local results directory."""
    configured = os.environ.get("COLONY_RESULT_STORAGE")
    if configured:
        return _BLOCK_PREFIX + configured
    return str(KernelSettings().home.expanduser() / "results")


@functools.cache
def storage_for(location: str) -> Path | str:
    """The storage Prefect writes results to for ``location`` (a block slug or a directory)."""
    if location.startswith(_BLOCK_PREFIX):
        return location.removeprefix(_BLOCK_PREFIX)
    Path(location).mkdir(parents=True, exist_ok=True)
    return Path(location)


def result_storage() -> Path | str:
    """The configured storage, for a task's or flow's ``result_storage``."""
    return storage_for(result_location())


def persisted(value: Any) -> ResultRecord[Any]:
    """``value`` written to the configured storage as JSON: the data of a run's final state.

    A state carrying a written record keeps it as its result, so the run's caller reads it
    back through the API (``State.result()``) from any process that reaches the storage.
    """
    store = ResultStore(
        # _sync=True: Prefect's async_dispatch takes it (stay sync inside an event loop); its typing omits it.
        result_storage=resolve_result_storage(result_storage(), _sync=True),  # type: ignore[call-arg]
        serializer=JSONSerializer(),
    )
    record = store.create_result_record(value)
    store.persist_result_record(record)
    return record
