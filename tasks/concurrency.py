"""A tool's task run carries its tags only when a concurrency limit uses one of them.

Prefect asks the API for concurrency slots on every task run that has tags, limit or
not: a round trip that cost a tool call 20% (bench/orchestration.py). The tags exist so
that ``prefect concurrency-limit create unit_convert 2`` limits a tool; so the set of
tags that carry a limit (``tag:<name>`` concurrency limits) is read once per
``REFRESH_SECONDS`` per process, and a run whose tags carry none runs untagged. A limit
created meanwhile applies within ``REFRESH_SECONDS``. ``COLONY_TASK_TAGS=always`` tags
every run (to filter task runs by tag in the UI, at that cost).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from prefect import Task, get_client

__all__ = ["REFRESH_SECONDS", "LimitedTags", "for_this_run"]

REFRESH_SECONDS = 10.0
_PAGE = 200


class LimitedTags:
    """The tags some concurrency limit names, re-read from the API at most every ``refresh_seconds``."""

    def __init__(self, refresh_seconds: float = REFRESH_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.refresh_seconds = refresh_seconds
        self.clock = clock
        self._read_at: float | None = None
        self._tags: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def current(self) -> frozenset[str]:
        """The limited tags as of at most ``refresh_seconds`` ago."""
        with self._lock:
            now = self.clock()
            if self._read_at is None or now - self._read_at >= self.refresh_seconds:
                self._tags, self._read_at = _read_limited_tags(), now
            return self._tags


def _read_limited_tags() -> frozenset[str]:
    tags: set[str] = set()
    with get_client(sync_client=True) as client:
        offset = 0
        while True:
            page = client.read_global_concurrency_limits(limit=_PAGE, offset=offset)
            tags.update(limit.name.removeprefix("tag:") for limit in page if limit.name.startswith("tag:"))
            if len(page) < _PAGE:
                return frozenset(tags)
            offset += _PAGE


LIMITED = LimitedTags()
_untagged: dict[Task[..., Any], Task[..., Any]] = {}


def for_this_run(task: Task[..., Any], limited: LimitedTags = LIMITED) -> Task[..., Any]:
    """``task`` itself when one of its tags carries a limit (or tags are always wanted), else its untagged twin."""
    wanted = os.environ.get("COLONY_TASK_TAGS", "limited")
    if wanted not in ("limited", "always"):
        raise ValueError(f"COLONY_TASK_TAGS must be 'limited' or 'always', not {wanted!r}")
    if wanted == "always" or task.tags & limited.current():
        return task
    twin = _untagged.get(task)
    if twin is None:
        twin = _untagged[task] = task.with_options(tags=set())
    return twin
