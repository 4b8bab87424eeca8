"""Where task results (and so cache entries) are kept.

``COLONY_RESULT_STORAGE`` names a Prefect storage block (``s3-bucket/colony-results``)
when workers on several machines must share a cache; otherwise results go to
``results/`` under ``COLONY_HOME``, so a cache hit survives a restart of the process.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from colony.kernel import KernelSettings

__all__ = ["result_location", "storage_for"]

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
