"""GET /metrics: Prometheus's text format, the counted metrics plus what the kernel says at scrape time.

Counted metrics (calls, latencies, HTTP answers) come from ``colony.telemetry.metrics``,
across workers when the gateway runs several. Pending approvals and the budget are read
from the kernel's store, which every worker shares, so any worker's answer is the whole
gateway's. The route asks for the same bearer token as every other non-public route.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client.core import GaugeMetricFamily

from colony.runtime import Runtime
from colony.surfaces.auth import Authenticator, principal_of
from colony.telemetry.metrics import CONTENT_TYPE, exposition

__all__ = ["metrics_routes"]


class KernelState:
    """Scrape-time gauges read from the kernel: approvals pending and their age, the budget per resource."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def collect(self) -> Iterator[GaugeMetricFamily]:
        kernel = self.runtime.kernels.get()
        pending = kernel.list_approvals(state="pending")
        now = time.time()
        yield GaugeMetricFamily("colony_approvals_pending", "Approval requests waiting for a person.", len(pending))
        oldest = max((now - approval.requested_at for approval in pending), default=0.0)
        yield GaugeMetricFamily(
            "colony_approval_oldest_pending_age_seconds", "Age of the oldest pending approval request.", oldest
        )
        usage = kernel.status().budget_usage
        families = {
            "used": GaugeMetricFamily(
                "colony_budget_used", "Settled usage this period, per resource.", labels=["resource"]
            ),
            "reserved": GaugeMetricFamily(
                "colony_budget_reserved", "Usage held by calls in flight, per resource.", labels=["resource"]
            ),
            "max": GaugeMetricFamily("colony_budget_limit", "The period's ceiling, per resource.", labels=["resource"]),
        }
        for resource, dimension in sorted(usage.items()):
            for field, family in families.items():
                family.add_metric([resource], float(getattr(dimension, field)))
        yield from families.values()


def metrics_routes(runtime: Runtime, authenticator: Authenticator) -> APIRouter:
    """The /metrics route."""
    router = APIRouter(tags=["gateway"])
    state = KernelState(runtime)

    @router.get("/metrics", response_class=Response)
    async def metrics(request: Request) -> Any:
        """Prometheus metrics (text format).

        Calls, latencies, governance cost, approvals, budget, HTTP answers, sandbox containers, upstream sessions.
        """
        await principal_of(authenticator, request.headers.get("authorization"))
        body = await anyio.to_thread.run_sync(exposition, state)
        return Response(body, media_type=CONTENT_TYPE)

    return router
