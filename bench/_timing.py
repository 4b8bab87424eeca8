"""Small timing helpers shared by the benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def per_call_seconds(function: Callable[[], object], *, calls: int = 20_000, repeats: int = 5) -> float:
    """Best-of-``repeats`` mean time of one call, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50 and p99 of ``samples``."""
    ordered = sorted(samples)
    return {
        "p50": statistics.median(ordered),
        "p99": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    }
