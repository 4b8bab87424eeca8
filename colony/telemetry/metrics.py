"""Colony's Prometheus metrics: what every call and every HTTP answer counts, in this process or across workers.

Sandbox containers (busy, idle) and upstream MCP sessions (connected, started) are counted
as they change, by the pools and sessions themselves, so every worker's share adds up.

One process counts in plain dicts (colony.telemetry.tallies: a dict update and a bucket
per call). When ``PROMETHEUS_MULTIPROC_DIR`` is set (``colony gateway --workers N`` sets
it for its workers) the counts are ``prometheus_client``'s multiprocess values instead,
kept in files every worker's scrape reads, so one scrape answers for the whole gateway.
What is read at scrape time (pending approvals, the budget) is the gateway's
(colony.surfaces.gateway.metrics).
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as _multiprocess

from colony.telemetry.tallies import CounterTally, GaugeTally, HistogramTally, TallyCollector

__all__ = [
    "CONTENT_TYPE",
    "UNRESOLVED",
    "count_call",
    "count_response",
    "exposition",
    "sandbox_containers",
    "upstream_connected",
    "upstream_started",
]

UNRESOLVED = "(unresolved)"  # a call refused before its tool resolved: the caller's name is never a label
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_CALLS = (
    "colony_calls",
    "Tool calls through the runtime, by tool, action, the gate's verdict and how they ended.",
    ("tool", "action", "verdict", "outcome"),
)
_CALL_SECONDS = ("colony_call_duration_seconds", "Time of a whole call through the runtime.", "tool")
_GOVERNANCE_SECONDS = (
    "colony_governance_duration_seconds",
    "Time of a governed call spent outside the tool's own action: checks, the gate, approval lookups, the record.",
    "tool",
)
_RESPONSES = ("colony_http_responses", "HTTP answers of the gateway by status code (401, 403, 429 among them).", "code")
_CONTAINERS = (
    "colony_sandbox_containers",
    "Sandbox containers running, by state: busy (lent to a call) or idle (warm, waiting for the next).",
    ("state",),
)
_CONNECTED = (
    "colony_upstream_sessions_connected",
    "Live sessions to each upstream MCP server (0: down or not started yet).",
    ("server",),
)
_STARTS = (
    "colony_upstream_starts",
    "Starts of each upstream MCP server's session: the first, then each restart after it died.",
    ("server",),
)


class _Tallied:
    """One process's counts."""

    def __init__(self) -> None:
        self.calls = CounterTally(*_CALLS)
        self.latency = HistogramTally(*_CALL_SECONDS, _BUCKETS)
        self.governance = HistogramTally(*_GOVERNANCE_SECONDS, _BUCKETS)
        self.responses = CounterTally(_RESPONSES[0], _RESPONSES[1], (_RESPONSES[2],))
        self.containers = GaugeTally(*_CONTAINERS)
        self.connected = GaugeTally(*_CONNECTED)
        self.starts = CounterTally(*_STARTS)

    def call(self, key: tuple[str, str, str, str], seconds: float, governance: float | None) -> None:
        self.calls.inc(key)
        self.latency.observe(key[0], seconds)
        if governance is not None:
            self.governance.observe(key[0], governance)

    def response(self, status: int) -> None:
        self.responses.inc((str(status),))

    def state(self, gauge: str, key: str, delta: float) -> None:
        getattr(self, gauge).add((key,), delta)

    def started(self, server: str) -> None:
        self.starts.inc((server,))

    def registry(self) -> CollectorRegistry:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(
            TallyCollector(
                self.calls, self.latency, self.governance, self.responses, self.containers, self.connected, self.starts
            )
        )
        return registry


class _Shared:
    """Every worker's counts, in ``prometheus_client``'s multiprocess files."""

    def __init__(self) -> None:
        self.calls = Counter(*_CALLS)
        self.latency = Histogram(*_CALL_SECONDS[:2], [_CALL_SECONDS[2]], buckets=_BUCKETS)
        self.governance = Histogram(*_GOVERNANCE_SECONDS[:2], [_GOVERNANCE_SECONDS[2]], buckets=_BUCKETS)
        self.responses = Counter(*_RESPONSES[:2], [_RESPONSES[2]])
        # livesum: a worker's containers and sessions count while it lives, and are gone with it
        self.containers = Gauge(*_CONTAINERS, multiprocess_mode="livesum")
        self.connected = Gauge(*_CONNECTED, multiprocess_mode="livesum")
        self.starts = Counter(*_STARTS)

    def call(self, key: tuple[str, str, str, str], seconds: float, governance: float | None) -> None:
        self.calls.labels(*key).inc()
        self.latency.labels(key[0]).observe(seconds)
        if governance is not None:
            self.governance.labels(key[0]).observe(governance)

    def response(self, status: int) -> None:
        self.responses.labels(str(status)).inc()

    def state(self, gauge: str, key: str, delta: float) -> None:
        getattr(self, gauge).labels(key).inc(delta)

    def started(self, server: str) -> None:
        self.starts.labels(server).inc()

    def registry(self) -> CollectorRegistry:
        registry = CollectorRegistry()
        _multiprocess.MultiProcessCollector(registry)
        return registry


_COUNTS: _Tallied | _Shared = _Shared() if os.environ.get("PROMETHEUS_MULTIPROC_DIR") else _Tallied()


def count_call(
    tool: str, action: str | None, outcome: Any, error: BaseException | None, seconds: float, executed: float | None
) -> None:
    """Count one call: its outcome (a CallOutcome), or the error it raised before one existed.

    ``executed`` is the time the tool's own action took in a governed call (None: it did not run); the
    rest of a governed call's time is its governance cost. A pure call has none.
    """
    if outcome is not None:
        verdict = outcome.verdict.decision if outcome.verdict is not None else "none"
        ended = outcome.status  # a StrEnum: the member is its value
    else:
        verdict, ended = "none", type(error).__name__ if error is not None else "unknown"
    governed = outcome is not None and outcome.verdict is not None
    governance = max(0.0, seconds - (executed or 0.0)) if governed else None
    _COUNTS.call((tool, action or UNRESOLVED, verdict, ended), seconds, governance)


def count_response(status: int) -> None:
    """Count one HTTP answer."""
    _COUNTS.response(status)


def sandbox_containers(busy: int, idle: int) -> None:
    """Containers that became busy (or stopped being: negative) and idle, in this process."""
    if busy:
        _COUNTS.state("containers", "busy", busy)
    if idle:
        _COUNTS.state("containers", "idle", idle)


def upstream_connected(server: str, change: int) -> None:
    """A session to ``server`` connected (+1) or ended (-1)."""
    _COUNTS.state("connected", server, change)


def upstream_started(server: str) -> None:
    """``server``'s session is being started (again)."""
    _COUNTS.started(server)


def exposition(*extra: Any) -> bytes:
    """The text format of a scrape: the counted metrics, plus ``extra`` collectors read now."""
    combined = CollectorRegistry(auto_describe=False)
    combined.register(_Forward(_COUNTS.registry()))
    for collector in extra:
        combined.register(collector)
    return generate_latest(combined)


class _Forward:
    """A registry's metrics, as one collector of another registry."""

    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Any:
        return self.source.collect()
