"""Counts kept in plain dicts: what one process counts per call for a fraction of ``prometheus_client``'s cost.

A call's counts change on the event loop only, so no lock is taken; a scrape reads them
into metric families (``TallyCollector``). A gateway with several workers counts with
``prometheus_client``'s multiprocess values instead (colony.telemetry.metrics).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

__all__ = ["CounterTally", "GaugeTally", "HistogramTally", "TallyCollector"]


class CounterTally:
    """A counter by label values."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self.name, self.documentation, self.labels = name, documentation, list(labels)
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, key: tuple[str, ...]) -> None:
        self.values[key] = self.values.get(key, 0) + 1

    def family(self) -> CounterMetricFamily:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for key, value in sorted(self.values.items()):
            family.add_metric(list(key), value)
        return family


class GaugeTally:
    """A gauge by label values, moved up and down (a state's count: containers busy, sessions connected)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self.name, self.documentation, self.labels = name, documentation, list(labels)
        self.values: dict[tuple[str, ...], float] = {}

    def add(self, key: tuple[str, ...], delta: float) -> None:
        self.values[key] = self.values.get(key, 0) + delta

    def family(self) -> GaugeMetricFamily:
        family = GaugeMetricFamily(self.name, self.documentation, labels=self.labels)
        for key, value in sorted(self.values.items()):
            family.add_metric(list(key), value)
        return family


class HistogramTally:
    """A histogram by one label's value, on fixed bucket bounds."""

    def __init__(self, name: str, documentation: str, label: str, bounds: Sequence[float]) -> None:
        self.name, self.documentation, self.label, self.bounds = name, documentation, label, list(bounds)
        self.values: dict[str, list[float]] = {}  # per label value: a count per bucket (+Inf last), then the sum

    def observe(self, key: str, value: float) -> None:
        counts = self.values.get(key)
        if counts is None:
            counts = self.values[key] = [0.0] * (len(self.bounds) + 2)
        counts[bisect.bisect_left(self.bounds, value)] += 1
        counts[-1] += value

    def family(self) -> HistogramMetricFamily:
        family = HistogramMetricFamily(self.name, self.documentation, labels=[self.label])
        for key, counts in sorted(self.values.items()):
            cumulative, buckets = 0.0, []
            for bound, count in zip([*map(str, self.bounds), "+Inf"], counts[:-1], strict=True):
                cumulative += count
                buckets.append((bound, cumulative))
            family.add_metric([key], buckets, counts[-1])
        return family


class TallyCollector:
    """The tallies, as a ``prometheus_client`` collector."""

    def __init__(self, *tallies: Any) -> None:
        self.tallies = tallies

    def collect(self) -> Iterator[Any]:
        for tally in self.tallies:
            yield tally.family()
