"""Benchmarks: each module prints its figures, measured side by side in one run."""

import os

# The temporary Prefect servers the benchmarks start have no network to send telemetry to.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
