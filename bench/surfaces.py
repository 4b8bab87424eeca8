"""Surfaces: POST /v1/tool_call and MCP tools/call over loopback, against a gateway in its own process.

Targets (issue 8): /v1/tool_call unit_convert with 16 concurrent clients >= 2,000
requests/s with p50 < 2 ms (seed 004 quotes 1-5 ms for a local call); MCP
tools/call over streamable HTTP: its p50 and its ratio to /v1/tool_call.

The gateway runs as `colony gateway` (uvicorn with uvloop and httptools); the
load comes from this process (on uvloop) over keep-alive connections written
with asyncio streams, so the client costs little next to the server. The machine's cores
are shared by both sides, and by anything else running.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import anyio
import httpx
import uvloop
from mcp import Client

from colony.runtime import LOCAL_OPERATOR, CallRequest, Runtime

ARGUMENTS = {"value": 10, "from_unit": "miles", "to_unit": "km"}
TOOL_CALL = {"target": {"kind": "local"}, "tool_name": "unit_convert", "tool_args": ARGUMENTS}
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "unit_convert", "arguments": ARGUMENTS},
}
CONCURRENCY = 16
# One caller drives thousands of calls a second here, far past the per-caller defaults: the limiter
# still runs on every call (its cost is measured), it just never refuses.
UNLIMITED = json.dumps(
    {"principal": {"rate": 1e6, "burst": 1e6}, "default": {"rate": 1e6, "burst": 1e6, "concurrency": 1000}}
)
LOAD_SECONDS = 5.0
SEQUENTIAL_CALLS = 1500


def request_bytes(path: str, body: Mapping[str, object], port: int, headers: dict[str, str] | None = None) -> bytes:
    payload = json.dumps(body).encode()
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{extra}"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode() + payload


async def read_response(reader: asyncio.StreamReader) -> int:
    """Read one HTTP/1.1 response with a Content-Length body; return its status."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
    await reader.readexactly(length)
    return status


async def connection(port: int, request: bytes, until: float, latencies: list[float]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            writer.write(request)
            if await read_response(reader) != 200:
                raise RuntimeError("the gateway answered an error during the benchmark")
            latencies.append(time.perf_counter() - start)
    finally:
        writer.close()


async def sequential(port: int, request: bytes, calls: int) -> list[float]:
    latencies: list[float] = []
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(100):  # warm-up
        writer.write(request)
        await read_response(reader)
    for _ in range(calls):
        start = time.perf_counter()
        writer.write(request)
        if await read_response(reader) != 200:
            raise RuntimeError("the gateway answered an error during the benchmark")
        latencies.append(time.perf_counter() - start)
    writer.close()
    return latencies


async def concurrent(port: int, request: bytes) -> tuple[float, list[float]]:
    latencies: list[float] = []
    until = time.perf_counter() + LOAD_SECONDS
    start = time.perf_counter()
    await asyncio.gather(*(connection(port, request, until, latencies) for _ in range(CONCURRENCY)))
    return len(latencies) / (time.perf_counter() - start), latencies


async def official_client(port: int, calls: int) -> list[float]:
    latencies = []
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        for _ in range(20):
            await client.call_tool("unit_convert", ARGUMENTS)
        for _ in range(calls):
            start = time.perf_counter()
            await client.call_tool("unit_convert", ARGUMENTS)
            latencies.append(time.perf_counter() - start)
    return latencies


async def in_process(calls: int) -> list[float]:
    runtime = Runtime()
    request = CallRequest("unit_convert", ARGUMENTS)
    latencies = []
    for _ in range(calls):
        start = time.perf_counter()
        await runtime.call(request, LOCAL_OPERATOR)
        latencies.append(time.perf_counter() - start)
    await runtime.aclose()
    return latencies


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of ``pid`` and its direct children so far, from /proc (Linux)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def ms(latencies: list[float], quantile: float) -> float:
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))] * 1000


def start_gateway(
    port: int, home: str, workers: int, source: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``colony gateway`` on ``port``; from the checkout at ``source`` instead of this one when given."""
    env = {
        **os.environ,
        "COLONY_HOME": home,
        "COLONY_GATEWAY_PORT": str(port),
        "COLONY_GATEWAY_RATE_LIMITS": UNLIMITED,
        **(env or {}),
    }
    command = [sys.executable, "-c", "from colony.cli import main; main()", "gateway", "--workers", str(workers)]
    if source is not None:
        env |= {"PYTHONPATH": str(source), "COLONY_REPO_ROOT": str(source)}
    cwd = source or Path(__file__).resolve().parents[1]
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def main() -> None:
    for workers in (1, 2):
        port = free_port()
        with tempfile.TemporaryDirectory() as home:
            gateway = start_gateway(port, home, workers)
            try:
                print(f"-- colony gateway --workers {workers}")
                run(port, gateway.pid) if workers == 1 else run_load(port, gateway.pid)
            finally:
                gateway.terminate()
                gateway.wait(timeout=10)


def loaded_run(port: int, pid: int, request: bytes) -> tuple[float, list[float], float]:
    """Sixteen clients for LOAD_SECONDS: requests/s, latencies, and the server's CPU ms per request."""
    before = cpu_seconds(pid)
    throughput, latencies = uvloop.run(concurrent(port, request))
    return throughput, latencies, (cpu_seconds(pid) - before) * 1000 / max(1, len(latencies))


def run_load(port: int, pid: int) -> None:
    """The sixteen-client figures only, for a multi-worker gateway."""
    throughput, loaded, cpu = loaded_run(port, pid, request_bytes("/v1/tool_call", TOOL_CALL, port))
    mcp_throughput, mcp_loaded = uvloop.run(concurrent(port, request_bytes("/mcp", MCP_CALL, port)))
    print(
        f"POST /v1/tool_call, {CONCURRENCY} clients: {throughput:,.0f} req/s, p50 {ms(loaded, 0.5):.3f} ms, "
        f"server CPU {cpu:.3f} ms/request; "
        f"MCP tools/call: {mcp_throughput:,.0f} req/s, p50 {ms(mcp_loaded, 0.5):.3f} ms"
    )


def run(port: int, pid: int) -> None:
    """Measure side by side: in-process, /v1/tool_call and /mcp, one client and sixteen."""
    tool_call = request_bytes("/v1/tool_call", TOOL_CALL, port)
    mcp_call = request_bytes("/mcp", MCP_CALL, port)
    local = anyio.run(in_process, SEQUENTIAL_CALLS)
    http_seq = uvloop.run(sequential(port, tool_call, SEQUENTIAL_CALLS))
    mcp_seq = uvloop.run(sequential(port, mcp_call, SEQUENTIAL_CALLS))
    official = anyio.run(official_client, port, 300)
    throughput, loaded, cpu = loaded_run(port, pid, tool_call)
    mcp_throughput, mcp_loaded, mcp_cpu = loaded_run(port, pid, mcp_call)

    print(f"in-process Runtime.call unit_convert: p50 {ms(local, 0.5):.3f} ms")
    print(
        f"POST /v1/tool_call, 1 client:  p50 {ms(http_seq, 0.5):.3f} ms, p99 {ms(http_seq, 0.99):.3f} ms"
        f" (target p50 < 2 ms)"
    )
    print(
        f"POST /v1/tool_call, {CONCURRENCY} clients: {throughput:,.0f} req/s (target >= 2,000), "
        f"p50 {ms(loaded, 0.5):.3f} ms, p99 {ms(loaded, 0.99):.3f} ms; "
        f"server CPU {cpu:.3f} ms/request = {1000 / cpu:,.0f} req/s per core"
    )
    print(
        f"MCP tools/call (raw JSON-RPC POST /mcp), 1 client: p50 {ms(mcp_seq, 0.5):.3f} ms, "
        f"p99 {ms(mcp_seq, 0.99):.3f} ms"
    )
    print(
        f"MCP tools/call, {CONCURRENCY} clients: {mcp_throughput:,.0f} req/s, p50 {ms(mcp_loaded, 0.5):.3f} ms; "
        f"server CPU {mcp_cpu:.3f} ms/request"
    )
    print(f"MCP tools/call through the official mcp Client: p50 {ms(official, 0.5):.3f} ms")
    print(
        f"ratios: MCP/HTTP p50 {ms(mcp_seq, 0.5) / ms(http_seq, 0.5):.2f}x (1 client), "
        f"{throughput / mcp_throughput:.2f}x throughput; official client/HTTP p50 "
        f"{ms(official, 0.5) / ms(http_seq, 0.5):.2f}x; HTTP/in-process p50 {ms(http_seq, 0.5) / ms(local, 0.5):.0f}x; "
        f"MCP/HTTP server CPU per call {mcp_cpu / cpu:.2f}x"
    )
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
