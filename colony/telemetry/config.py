"""Whether telemetry is on, read once from the environment the standard way.

Tracing follows OpenTelemetry's own variables: it is on when an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), unless
``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``; the exporter, the sampler
(``OTEL_TRACES_SAMPLER``), the service name and the batch processor read the rest.
Colony's own: ``COLONY_TRACE_ARGUMENTS=N`` records a call's arguments and result in its
span, redacted and cut to N characters (0, the default: never, as they may hold secrets);
``COLONY_METRICS=false`` leaves out the Prometheus counters.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from colony.errors import SettingsError

__all__ = ["TelemetrySettings"]

_FALSE = {"false", "0", "no", "off"}


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    """What the environment asks for."""

    tracing: bool = False
    metrics: bool = True
    capture_bytes: int = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TelemetrySettings:
        env = os.environ if environ is None else environ
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        disabled = env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
        exporter = env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
        raw = env.get("COLONY_TRACE_ARGUMENTS", "0").strip() or "0"
        try:
            capture = int(raw)
        except ValueError:
            raise SettingsError(f"COLONY_TRACE_ARGUMENTS must be a number of characters, got {raw!r}") from None
        if capture < 0:
            raise SettingsError(f"COLONY_TRACE_ARGUMENTS must be 0 or more characters, got {capture}")
        return cls(
            tracing=bool(endpoint) and not disabled and exporter != "none",
            metrics=env.get("COLONY_METRICS", "true").strip().lower() not in _FALSE,
            capture_bytes=capture,
        )
