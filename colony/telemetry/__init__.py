"""Telemetry: OpenTelemetry traces of every call, and Prometheus metrics (off-path and cheap when off)."""

from colony.telemetry.calls import (
    APPROVAL,
    AUTHORIZE,
    EXECUTE,
    GATE,
    RECORD,
    note_execution,
    observe_call,
    resolved,
    stage,
)
from colony.telemetry.tracing import configure, settings, shutdown, tracer

__all__ = [
    "APPROVAL",
    "AUTHORIZE",
    "EXECUTE",
    "GATE",
    "RECORD",
    "configure",
    "note_execution",
    "observe_call",
    "resolved",
    "settings",
    "shutdown",
    "stage",
    "tracer",
]
