"""Colony's Prometheus metrics: what every call and every HTTP answer counts, in this process or across workers.

Counted as they happen (cheap: a labelled increment and two histogram observations per
call). When ``PROMETHEUS_MULTIPROC_DIR`` is set (``colony gateway --workers N`` sets it for
its workers) ``prometheus_client`` keeps the values in files every worker's scrape reads,
so one scrape answers for the whole gateway. What is read at scrape time instead (pending
approvals, the budget) is the gateway's (colony.surfaces.gateway.metrics).
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import multiprocess as _multiprocess

__all__ = ["CONTENT_TYPE", "UNRESOLVED", "count_call", "count_response", "exposition", "registry"]

UNRESOLVED = "(unresolved)"  # a call refused before its tool resolved: the caller's name is never a label
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

CALLS = Counter(
    "colony_calls",
    "Tool calls through the runtime, by tool, action, the gate's verdict and how they ended.",
    ["tool", "action", "verdict", "outcome"],
)
CALL_SECONDS = Histogram(
    "colony_call_duration_seconds", "Time of a whole call through the runtime.", ["tool"], buckets=_LATENCY_BUCKETS
)
GOVERNANCE_SECONDS = Histogram(
    "colony_governance_duration_seconds",
    "Time of a call spent outside the tool's own action: checks, the gate, approval lookups and the record.",
    ["tool"],
    buckets=_LATENCY_BUCKETS,
)
RESPONSES = Counter(
    "colony_http_responses", "HTTP answers of the gateway by status code (401, 403 and 429 among them).", ["code"]
)


def count_call(
    tool: str, action: str | None, outcome: Any, error: BaseException | None, seconds: float, executed: float
) -> None:
    """Count one call: its outcome (a CallOutcome), or the error it raised before one existed."""
    if outcome is not None:
        verdict = (outcome.verdict or {}).get("decision", "none")
        ended = outcome.status.value
    else:
        verdict, ended = "none", type(error).__name__ if error is not None else "unknown"
    key = (tool, action or UNRESOLVED, verdict, ended)
    children = _CALL_CHILDREN.get(key)
    if children is None:  # a labelled child is looked up once per label set, not per call
        children = _CALL_CHILDREN[key] = (
            CALLS.labels(*key),
            CALL_SECONDS.labels(tool),
            GOVERNANCE_SECONDS.labels(tool),
        )
    calls, latency, governance = children
    calls.inc()
    latency.observe(seconds)
    governance.observe(max(0.0, seconds - executed))


def count_response(status: int) -> None:
    """Count one HTTP answer."""
    child = _RESPONSE_CHILDREN.get(status)
    if child is None:
        child = _RESPONSE_CHILDREN[status] = RESPONSES.labels(str(status))
    child.inc()


_CALL_CHILDREN: dict[tuple[str, str, str, str], tuple[Any, Any, Any]] = {}
_RESPONSE_CHILDREN: dict[int, Any] = {}


def registry() -> CollectorRegistry:
    """The registry a scrape reads: every worker's files in multiprocess mode, else this process's own."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        collected = CollectorRegistry()
        _multiprocess.MultiProcessCollector(collected)
        return collected
    from prometheus_client import REGISTRY

    return REGISTRY


def exposition(*extra: Any) -> bytes:
    """The text format of a scrape: the counted metrics, plus ``extra`` collectors read now."""
    collected = registry()
    if not extra:
        return generate_latest(collected)
    combined = CollectorRegistry(auto_describe=False)
    combined.register(_Forward(collected))
    for collector in extra:
        combined.register(collector)
    return generate_latest(combined)


class _Forward:
    """A registry's metrics, as one collector of another registry."""

    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Any:
        return self.source.collect()
