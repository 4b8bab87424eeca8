"""Telemetry: what tracing and metrics cost a call, side by side in one run.

Three gateways take turns (alternating rounds, the order reversed every other round, so
drift on a shared machine hits all alike), each warmed by 300 calls, then under
``bench.surfaces``' sixteen-client load on POST /v1/tool_call (unit_convert): the commit
before telemetry (``COLONY_BENCH_TELEMETRY_BASELINE``, extracted with ``git archive``),
this checkout with tracing off (no OTLP endpoint: the default; the Prometheus counters
on), and this checkout with tracing on, its batch exporter sending to a local OTLP/HTTP
receiver. The same three run ``bench.governance``'s in-process measurement, for the
governance cost of a side-effecting call (governed p50 - ungoverned p50). Targets: off
>= 0.98x the throughput before, on >= 0.85x. Then the cost of one GET /metrics scrape
of the gateway that served the load. Last, what a refused call costs with tracing on
(a caller over its rate limit, in process, the exporter's thread included), here and at
``COLONY_BENCH_REFUSAL_BASELINE``, whose spans recorded each refusal's stack trace.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvloop

from bench.audit import REPO, extract, governance_cost, measure
from bench.surfaces import TOOL_CALL, free_port, loaded_run, ms, request_bytes, sequential, start_gateway

BASELINE = os.environ.get("COLONY_BENCH_TELEMETRY_BASELINE", "f92af09")
REFUSAL_BASELINE = os.environ.get("COLONY_BENCH_REFUSAL_BASELINE", "ca37066")
ROUNDS = 3
SCRAPES = 200
REFUSALS = 3000

_REFUSALS = """
import asyncio, sys, time
from colony.errors import RateLimitedError
from colony.runtime import LOCAL_OPERATOR, CallRequest, Runtime
from colony.runtime.rate_limits import RateLimitSettings
from colony.telemetry import tracing

async def main(calls):
    limits = RateLimitSettings.model_validate({"default": {"rate": 0.001, "burst": 1}})
    runtime = Runtime(rate_limits=limits)
    request = CallRequest("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"})
    await runtime.call(request, LOCAL_OPERATOR)  # the one call the bucket holds: every later one is refused

    async def refused(rounds):
        for _ in range(rounds):
            try:
                await runtime.call(request, LOCAL_OPERATOR)
            except RateLimitedError:
                pass
            else:
                raise SystemExit("a call over the limit was let through")
        tracing.provider().force_flush()  # the exporter's work on these spans counts too

    await refused(200)  # warm
    started = time.process_time()
    await refused(calls)
    print((time.process_time() - started) / calls * 1e6)
    await runtime.aclose()

asyncio.run(main(int(sys.argv[1])))
"""


_RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        return

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


@contextmanager
def receiver() -> Iterator[str]:
    """A local OTLP/HTTP endpoint that accepts and drops every export, in its own process (not the load's): its URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", _RECEIVER, str(port)])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.post(f"http://127.0.0.1:{port}/v1/traces", content=b"", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def throughput(source: Path | None, env: dict[str, str]) -> float:
    """Requests/s of one gateway (this checkout, or the one at ``source``) under sixteen clients."""
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        gateway = start_gateway(port, home, 1, source, env)
        try:
            request = request_bytes("/v1/tool_call", TOOL_CALL, port)
            uvloop.run(sequential(port, request, 300))  # warm: the first calls import and compile what they use
            rate, _, _ = loaded_run(port, gateway.pid, request)
        finally:
            gateway.terminate()
            gateway.wait(timeout=10)
    return rate


def scrape_cost() -> tuple[float, int]:
    """p50 ms of GET /metrics on a gateway that served a load, and the size of the answer."""
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        gateway = start_gateway(port, home, 1)
        try:
            loaded_run(port, gateway.pid, request_bytes("/v1/tool_call", TOOL_CALL, port))
            latencies = []
            with httpx.Client() as client:
                for _ in range(SCRAPES + 20):
                    start = time.perf_counter()
                    answer = client.get(f"http://127.0.0.1:{port}/metrics")
                    latencies.append(time.perf_counter() - start)
                    answer.raise_for_status()
            return ms(latencies[20:], 0.5), len(answer.content)
        finally:
            gateway.terminate()
            gateway.wait(timeout=10)


def refusal_cost(source: Path, endpoint: str) -> float:
    """CPU µs per refused call with tracing on, in a fresh interpreter running the checkout at ``source``."""
    env = {**os.environ, "PYTHONPATH": str(source), "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    command = [sys.executable, "-c", _REFUSALS, str(REFUSALS)]
    done = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def refusals(endpoint: str) -> tuple[float, float]:
    """Median CPU µs per refused call, traced, at REFUSAL_BASELINE and here (alternating rounds)."""
    with tempfile.TemporaryDirectory() as directory:
        before = extract(REFUSAL_BASELINE, Path(directory))
        figures: dict[str, list[float]] = {"before": [], "now": []}
        for _ in range(ROUNDS):
            figures["before"].append(refusal_cost(before, endpoint))
            figures["now"].append(refusal_cost(REPO, endpoint))
    return statistics.median(figures["before"]), statistics.median(figures["now"])


def main() -> None:
    with receiver() as endpoint, tempfile.TemporaryDirectory() as directory:
        before = extract(BASELINE, Path(directory))
        traced = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "colony-bench"}
        sides: dict[str, tuple[Path | None, dict[str, str]]] = {
            "before": (before, {}),
            "off": (None, {}),
            "on": (None, traced),
        }
        rates: dict[str, list[float]] = {name: [] for name in sides}
        costs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for turn in range(ROUNDS):  # swap who goes first each round, so drift hits every side alike
            order = list(sides.items())
            for name, (source, env) in order if turn % 2 == 0 else order[::-1]:
                rates[name].append(throughput(source, env))
                saved = {key: os.environ.get(key) for key in env}
                os.environ.update(env)  # the in-process measurement's interpreter inherits them
                try:
                    costs[name].append(measure(source or REPO))
                finally:
                    for key, value in saved.items():
                        if value is None:
                            os.environ.pop(key, None)
                        else:
                            os.environ[key] = value
    rate = {name: statistics.median(values) for name, values in rates.items()}
    cost = {name: governance_cost(values) for name, values in costs.items()}
    print(
        f"POST /v1/tool_call unit_convert, 16 clients, median of {ROUNDS} alternating rounds: "
        f"before telemetry ({BASELINE}) {rate['before']:,.0f} req/s; tracing off {rate['off']:,.0f} req/s "
        f"({rate['off'] / rate['before']:.3f}x, target >= 0.98x); tracing on, batched to a local receiver "
        f"{rate['on']:,.0f} req/s ({rate['on'] / rate['before']:.3f}x, target >= 0.85x)"
    )
    print(
        f"governance cost of append_note in process (governed p50 - ungoverned p50): before {cost['before']:.3f} ms, "
        f"tracing off {cost['off']:.3f} ms, tracing on {cost['on']:.3f} ms"
    )
    scrape, size = scrape_cost()
    print(f"GET /metrics after a load: p50 {scrape:.3f} ms for {size:,} bytes")
    with receiver() as endpoint:
        then, now = refusals(endpoint)
    print(
        f"a refused call (over its rate limit) with tracing on, CPU per call in process: before ({REFUSAL_BASELINE}) "
        f"{then:,.0f} µs, now {now:,.0f} µs ({now / then:.3f}x)"
    )


if __name__ == "__main__":
    main()
