"""The tracer Colony's spans go to: the SDK's, exporting over OTLP/HTTP in batches, or none at all.

Off (no endpoint configured) there is no tracer: every hook checks one module global
and does nothing else, so an untraced call costs a branch per stage. On, spans go to a
``BatchSpanProcessor`` (its own thread exports them, never the request) and the
provider becomes the process's global one too, so libraries that trace with the
OpenTelemetry API (pydantic-ai's agent instrumentation, Prefect) join the same trace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from colony.telemetry.config import TelemetrySettings

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

__all__ = ["STATE", "configure", "provider", "settings", "shutdown", "tracer"]

STATE: dict[str, Any] = {"tracer": None, "provider": None, "settings": TelemetrySettings()}
"""The tracer (None: off), its provider and the settings; read directly by the per-call hooks (one lookup, no call)."""


def tracer() -> Tracer | None:
    """Colony's tracer, or None when tracing is off."""
    return STATE["tracer"]


def settings() -> TelemetrySettings:
    """The telemetry settings this process runs with."""
    return STATE["settings"]


def configure(environ: Mapping[str, str] | None = None) -> TelemetrySettings:
    """Read the settings and, when tracing is asked for, start exporting; a provider already running is shut down."""
    chosen = TelemetrySettings.from_env(environ)
    shutdown()
    STATE["settings"] = chosen
    if chosen.tracing:
        STATE["provider"], STATE["tracer"] = _start(environ)
    return chosen


def shutdown() -> None:
    """Export what is batched and stop (a server calls this as it stops)."""
    provider = STATE["provider"]
    STATE["provider"] = STATE["tracer"] = None
    if provider is not None:
        provider.shutdown()


def provider() -> Any:
    """The SDK's TracerProvider Colony exports with, or None when tracing is off (for pydantic-ai's instrumentation)."""
    return STATE["provider"]


def _start(environ: Mapping[str, str] | None) -> tuple[Any, Tracer]:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    env = os.environ if environ is None else environ
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if not endpoint:  # the base endpoint names the collector; traces go to its /v1/traces
        endpoint = env["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME", "colony")})
    provider = TracerProvider(resource=resource)  # the sampler: OTEL_TRACES_SAMPLER, as the SDK reads it
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":  # the first one set is the global one
        trace.set_tracer_provider(provider)
    return provider, provider.get_tracer("colony")


configure()
