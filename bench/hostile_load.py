"""Honest callers beside hostile ones: what the attackers cost everybody else, in one run.

A ``colony gateway`` (its own process, loopback, a token per caller) serves sixteen
honest clients calling ``unit_convert`` over keep-alive connections while a prober asks
``/health`` ten times a second. The same load runs twice, quiet and then beside the
attackers of issue 14, each with its own token:

- ReDoS: ``jsonschema_validate`` with ``^(a+)+$`` on 30 a's and ``!`` and ``^(a|aa)+$`` on
  256 KiB (both linear on RE2), and the slowest schema the caps let through (a 2000 x 60,000
  ``allOf``, stopped by the work budget);
- output amplification: ``pii_redact`` on 256 KiB of dense addresses, 64-character
  replacement (the most the caps allow), and the 8,000-character replacement (refused);
- slow clients: connections that send half a body and then a byte a second.

Target (issue 14): ``/health`` p99 under 100 ms with the attackers running.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvloop

HONEST_CLIENTS = 16
HONEST_RATE = 40.0  # calls/s each: 640/s together, within every per-caller limit
PHASE_SECONDS = 10.0
HEALTH_INTERVAL = 0.1
SLOW_CLIENTS = 50
ARGUMENT_CAP = 256 * 1024
UNIT_CONVERT = {"value": 10, "from_unit": "miles", "to_unit": "km"}


def attacks() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each hostile call: name -> (tool, arguments), at the sizes the gateway accepts."""
    evil = "a" * 30 + "!"
    dense = "a@b.cc " * ((ARGUMENT_CAP - 200) // 7)
    return {
        "redos ^(a+)+$": ("jsonschema_validate", {"schema": {"pattern": "^(a+)+$"}, "data": evil}),
        "redos ^(a|aa)+$ on 256 KiB": (
            "jsonschema_validate",
            {"schema": {"pattern": "^(a|aa)+$"}, "data": "a" * (ARGUMENT_CAP - 200) + "!"},
        ),
        "allOf 2000 x 60,000 items": (
            "jsonschema_validate",
            {"schema": {"items": {"allOf": [{"type": "integer"}] * 2000}}, "data": [0] * 60_000},
        ),
        "amplifier at the caps": ("pii_redact", {"text": dense, "replacement": "R" * 64}),
        "amplifier 8000-char replacement": (
            "pii_redact",
            {"text": "x@y.io " * (218_000 // 7), "replacement": "R" * 8000},
        ),
    }


@dataclass
class Caller:
    """One principal's bearer token and the request bytes it sends."""

    token: str
    agent: str


@dataclass
class Phase:
    """What one phase measured."""

    honest: list[float] = field(default_factory=list)
    honest_errors: int = 0
    health: list[float] = field(default_factory=list)
    attack_statuses: dict[str, dict[int, int]] = field(default_factory=dict)


def token_table(honest: list[Caller], hostile: list[Caller]) -> str:
    """``COLONY_GATEWAY_TOKENS``: every caller a non-operator agent granted the catalog tools it calls."""
    grants = {c.token: {"agent": c.agent, "capabilities": ["tool:unit_convert"]} for c in honest}
    grants |= {c.token: {"agent": c.agent, "capabilities": ["tool:*"]} for c in hostile}
    return json.dumps(grants)


def request(port: int, path: str, token: str, body: dict[str, Any] | None) -> bytes:
    """One HTTP/1.1 request's bytes (GET when there is no body)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    if body is None:
        return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}\r\n".encode()
    payload = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode() + payload


def tool_call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"target": {"kind": "local"}, "tool_name": tool, "tool_args": arguments}


async def read_response(reader: asyncio.StreamReader) -> int:
    """Read one response with a Content-Length body; return its status."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    await reader.readexactly(length)
    return status


async def keep_calling(port: int, payload: bytes, until: float, on_answer: Any, rate: float | None = None) -> None:
    """Send ``payload`` over one keep-alive connection until ``until``, reporting each status and latency.

    With ``rate``, calls start on a fixed schedule (an honest client's steady load); without, back to back.
    """
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**24)
    next_start = time.perf_counter()
    try:
        while time.perf_counter() < until:
            if rate is not None:
                next_start += 1 / rate
                await asyncio.sleep(max(0.0, next_start - time.perf_counter()))
            start = time.perf_counter()
            writer.write(payload)
            try:
                status = await read_response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):  # the server closed it: open another
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**24)
                continue
            on_answer(status, time.perf_counter() - start)
    finally:
        writer.close()


def probe_health(port: int, seconds: float, results: Any) -> None:
    """Ask /health every HEALTH_INTERVAL on a fresh connection, as a load balancer would.

    Runs in its own process, so the load generators' work never delays the probe.
    """
    latencies: list[float] = []
    uvloop.run(_probe(port, time.perf_counter() + seconds, latencies))
    results.put(latencies)


async def _probe(port: int, until: float, latencies: list[float]) -> None:
    while time.perf_counter() < until:
        start = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request(port, "/health", "", None))
        await read_response(reader)
        latencies.append(time.perf_counter() - start)
        writer.close()
        await asyncio.sleep(max(0.0, HEALTH_INTERVAL - (time.perf_counter() - start)))


async def slow_client(port: int, token: str, until: float) -> None:
    """Send a head and half a body, then a byte a second; reconnect when dropped."""
    payload = request(port, "/v1/tool_call", token, tool_call("unit_convert", UNIT_CONVERT))
    while time.perf_counter() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(payload[: len(payload) - 20])
            for byte in payload[len(payload) - 20 :]:
                if time.perf_counter() >= until or reader.at_eof():
                    break
                await asyncio.sleep(1.0)
                writer.write(bytes([byte]))
                await writer.drain()
            writer.close()
        except (ConnectionError, OSError):
            await asyncio.sleep(0.1)


async def run_phase(port: int, honest: list[Caller], hostile: list[Caller], seconds: float) -> Phase:
    """The honest load and the prober for ``seconds``; the attackers too when ``hostile`` is non-empty."""
    phase = Phase()
    until = time.perf_counter() + seconds

    def on_honest(status: int, latency: float) -> None:
        if status == 200:
            phase.honest.append(latency)
        else:
            phase.honest_errors += 1

    jobs = [
        keep_calling(
            port,
            request(port, "/v1/tool_call", c.token, tool_call("unit_convert", UNIT_CONVERT)),
            until,
            on_honest,
            HONEST_RATE,
        )
        for c in honest
    ]
    results: multiprocessing.Queue[list[float]] = multiprocessing.Queue()
    prober = multiprocessing.Process(target=probe_health, args=(port, seconds, results))
    prober.start()
    if hostile:
        for (name, (tool, arguments)), attacker in zip(attacks().items(), hostile, strict=False):
            counts = phase.attack_statuses.setdefault(name, {})

            def on_attack(status: int, _latency: float, counts: dict[int, int] = counts) -> None:
                counts[status] = counts.get(status, 0) + 1

            jobs.append(
                keep_calling(
                    port, request(port, "/v1/tool_call", attacker.token, tool_call(tool, arguments)), until, on_attack
                )
            )
        jobs.extend(slow_client(port, hostile[-1].token, until) for _ in range(SLOW_CLIENTS))
    await asyncio.gather(*jobs)
    phase.health = await asyncio.to_thread(results.get, timeout=seconds + 30)
    prober.join()
    return phase


def callers(prefix: str, count: int) -> list[Caller]:
    return [Caller(secrets.token_urlsafe(24), f"{prefix}-{index}") for index in range(count)]


def start_gateway(port: int, home: str, tokens: str) -> subprocess.Popen[bytes]:
    """``colony gateway`` from this checkout on ``port``, with the token table."""
    env = {**os.environ, "COLONY_HOME": home, "COLONY_GATEWAY_PORT": str(port), "COLONY_GATEWAY_TOKENS": tokens}
    env.pop("COLONY_GATEWAY_TOKENS_FILE", None)
    command = [sys.executable, "-c", "from colony.cli import main; main()", "gateway"]
    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(command, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("colony gateway did not start")


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def measure(seconds: float = PHASE_SECONDS) -> tuple[Phase, Phase]:
    """One gateway, the quiet phase then the hostile one."""
    honest, hostile = callers("honest", HONEST_CLIENTS), callers("attacker", len(attacks()))
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        gateway = start_gateway(port, home, token_table(honest, hostile))
        try:
            quiet = uvloop.run(run_phase(port, honest, [], seconds))
            loud = uvloop.run(run_phase(port, honest, hostile, seconds))
        finally:
            gateway.terminate()
            gateway.wait(timeout=10)
    return quiet, loud


def ms(samples: list[float], quantile: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))] * 1000 if ordered else float("nan")


def main() -> None:
    quiet, loud = measure()
    for label, phase in (("quiet", quiet), ("beside the attackers", loud)):
        print(
            f"{label:>22}: honest {len(phase.honest) / PHASE_SECONDS:,.0f} calls/s, "
            f"p50 {ms(phase.honest, 0.5):.2f} ms, "
            f"p99 {ms(phase.honest, 0.99):.2f} ms, errors {phase.honest_errors}; "
            f"/health p50 {ms(phase.health, 0.5):.2f} ms, p99 {ms(phase.health, 0.99):.2f} ms (target < 100 ms)"
        )
    for name, counts in loud.attack_statuses.items():
        answered = ", ".join(f"{status}: {count}" for status, count in sorted(counts.items()))
        print(f"  attacker {name}: {answered}")
    print(
        f"ratios beside/quiet: honest p99 {ms(loud.honest, 0.99) / ms(quiet.honest, 0.99):.2f}x, "
        f"/health p99 {ms(loud.health, 0.99) / ms(quiet.health, 0.99):.2f}x; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
