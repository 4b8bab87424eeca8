"""Governance: what the gate costs a side-effecting call, and what the pipeline costs a pure one.

Targets: the gate (propose + record, around the same execution) costs at most 0.5 ms
per side-effecting call in-process on SQLite (1.5 ms before the one Governor path); a
pure ``/v1/tool_call`` is no slower than before (3,265 req/s at 16 clients was measured
before the one pipeline).

In-process, side by side in one run and call by call: the same side-effecting tool (it
appends a line to a file) executed with an authorization and nothing else (ungoverned),
through ``Runtime.call`` (propose, execute, record in one worker thread), and through
the same Governor with an executor plugged in (the action on the loop, between a hop for
the gate and one for the record). When ``COLONY_BENCH_BASELINE`` names a git ref, the
in-process cost is also measured by that ref's checkout, alternating with this one's.
Over HTTP, call by call on one keep-alive connection: POST /v1/tool_call for it, and for
the same tool declared without side effects (so it runs ungoverned, behind every guard).
Then the pure ``unit_convert`` at 16 clients against this checkout's gateway and, when
``COLONY_BENCH_BASELINE`` names a git ref (default: f92af09, the commit before the one Governor path),
a gateway built from that ref in a temporary worktree, alternating, with each server's
CPU time per request (less sensitive to the machine's other load than requests/s), and
each checkout's gateway app called straight through ASGI (its own cost, without sockets).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

import anyio
import uvloop

from bench.surfaces import (
    TOOL_CALL,
    UNLIMITED,
    concurrent,
    cpu_seconds,
    free_port,
    ms,
    read_response,
    request_bytes,
    sequential,
    start_gateway,
)
from colony import LocalToolCapability, action_executor
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, Governor, KernelProvider, Runtime
from colony.runtime.authorization import Authorization
from colony.runtime.executor import BlockingAction, Execution, Executor
from tests.colony.surfaces.sample_tools import Appended, AppendNote, notes_file

REPO = Path(__file__).resolve().parents[1]
CALLS = 400
HTTP_CALLS = 600
ROUNDS = 3
BASELINE = os.environ.get("COLONY_BENCH_BASELINE", "f92af09")  # it has this module: both sides run one harness
AGENT = "bench-agent"


class Case(TypedDict):
    """A governed call's case, as both the runtime and the gateway take it."""

    rationale: str
    rollback_plan: str
    evidence: dict[str, list[str]]


CASE: Case = {
    "rationale": "Append the benchmark's line to the notes file for the record",
    "rollback_plan": "Delete the appended line from notes.txt",
    "evidence": {"tests": ["tests/colony/surfaces/test_governance.py"]},
}
BUDGETS = {"COLONY_BUDGET_LLM_CALLS": "1000000000", "COLONY_BUDGET_RUNTIME_SECONDS": "1000000000"}


class UngovernedNote(LocalToolCapability):
    """The same tool declared without side effects: it runs without the gate (the HTTP comparison).

    Its own class: a subclass of ``AppendNote`` may not drop the governance its base declares.
    """

    spec = AppendNote.spec.model_copy(update={"name": "append_note_ungoverned", "side_effecting": False})

    @action_executor
    def append_note(self, *, note: str) -> Appended:
        """Append ``note`` as one line to the notes file."""
        path = notes_file()
        with path.open("a", encoding="utf-8") as stream:
            stream.write(note.replace("\n", " ") + "\n")
        return Appended(path=str(path), notes=len(path.read_text(encoding="utf-8").splitlines()))


class PluggedExecutor:
    """The runtime's executor behind a plugged-in one: the Governor keeps its three hops."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.timeout_seconds = inner.timeout_seconds

    async def run(
        self, tool: Any, action: str, arguments: dict[str, Any], authorization: Authorization | None
    ) -> Execution:
        return await self.inner.run(tool, action, arguments, authorization)

    def blocking(self, tool: Any, action: str) -> BlockingAction | None:
        return None  # the action through run(): a hop for the gate, the run, a hop for the record


def sample_catalog(root: Path) -> Path:
    entries = [
        {
            "name": "append_note",
            "capability": "append_note",
            "capability_fqn": "tests.colony.surfaces.sample_tools.AppendNote",
        },
        {
            "name": "append_note_ungoverned",
            "capability": "append_note",
            "capability_fqn": "bench.governance.UngovernedNote",
        },
        {"name": "unit_convert", "capability": "convert_units", "capability_fqn": "tools.unit_convert.UnitConvert"},
    ]
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "tools": entries}))
    return path


def trusted_kernel(home: Path) -> ColonyKernel:
    kernel = ColonyKernel(KernelSettings(home=home, budget_llm_calls=10**9, budget_runtime_seconds=10**9))
    kernel.set_trust(AGENT, 0.9)
    return kernel


async def in_process(home: Path) -> dict[str, list[float]]:
    """Per-call latencies, call by call: ungoverned execution, the governed call, and it in three hops."""
    os.environ["COLONY_HOME"] = str(home)  # where append_note writes
    runtime = Runtime(Catalog(sample_catalog(home / "repo")), kernels=KernelProvider(trusted_kernel(home)))
    three_hops = Governor(runtime.kernels, PluggedExecutor(runtime.executor))
    tool = runtime.catalog.resolve("append_note")
    request = CallRequest("append_note", {"note": "bench"}, agent_id=AGENT, **CASE)
    acting = LOCAL_OPERATOR.acting_for(AGENT)
    samples: dict[str, list[float]] = {"ungoverned": [], "governed": [], "three hops": []}
    for turn in range(CALLS + 50):  # the first 50 warm every path
        authorization = Authorization._issue(proposal_id="p", agent_id=AGENT, tool="append_note", action="append_note")
        start = time.perf_counter()
        await runtime.executor.run(tool, "append_note", {"note": "bench"}, authorization)
        ungoverned = time.perf_counter() - start
        start = time.perf_counter()
        outcome = await runtime.call(request, LOCAL_OPERATOR)
        governed = time.perf_counter() - start
        assert outcome.status.value == "executed", outcome.verdict
        start = time.perf_counter()
        outcome = await three_hops.govern(tool, "append_note", {"note": "bench"}, request, acting)
        hops = time.perf_counter() - start
        assert outcome.status.value == "executed", outcome.verdict
        if turn >= 50:
            for name, value in (("ungoverned", ungoverned), ("governed", governed), ("three hops", hops)):
                samples[name].append(value)
    await runtime.aclose()
    return samples


async def over_http(port: int, requests: dict[str, bytes], calls: int) -> dict[str, list[float]]:
    """Per-call latencies on one keep-alive connection, the requests taking turns call by call."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    samples: dict[str, list[float]] = {name: [] for name in requests}
    try:
        for turn in range(calls + 50):
            for name, request in requests.items():
                start = time.perf_counter()
                writer.write(request)
                if await read_response(reader) != 200:
                    raise RuntimeError(f"the gateway answered an error to {name} during the benchmark")
                if turn >= 50:
                    samples[name].append(time.perf_counter() - start)
    finally:
        writer.close()
    return samples


def http_governance(home: Path) -> dict[str, list[float]]:
    """Governed and ungoverned append_note through POST /v1/tool_call of this checkout's gateway."""
    trusted_kernel(home).close()
    repo = sample_catalog(home / "repo").parents[1]
    port = free_port()
    gateway = start_gateway(port, str(home), 1, env={"COLONY_REPO_ROOT": str(repo), **BUDGETS})
    agent = {"X-Colony-Agent": AGENT}
    call = {"target": {"kind": "local"}, "tool_args": {"note": "bench"}, **CASE}
    requests = {
        "ungoverned": request_bytes("/v1/tool_call", {**call, "tool_name": "append_note_ungoverned"}, port, agent),
        "governed": request_bytes("/v1/tool_call", {**call, "tool_name": "append_note"}, port, agent),
    }
    try:
        return uvloop.run(over_http(port, requests, HTTP_CALLS))
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)


def baseline_checkout(ref: str, into: Path) -> Path | None:
    result = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(into), ref], capture_output=True, text=True
    )
    return into if result.returncode == 0 else None


def pure_throughput(source: Path | None, home: str) -> tuple[float, float, float]:
    """Requests/s, p50 ms and the server's CPU ms per request of 16 clients calling unit_convert."""
    port = free_port()
    gateway = start_gateway(port, home, 1, source)
    try:
        request = request_bytes("/v1/tool_call", TOOL_CALL, port)
        uvloop.run(sequential(port, request, 300))
        before = cpu_seconds(gateway.pid)
        throughput, latencies = uvloop.run(concurrent(port, request))
        cpu = (cpu_seconds(gateway.pid) - before) * 1000 / max(1, len(latencies))
        return throughput, ms(latencies, 0.5), cpu
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)


# The gateway app called straight through ASGI (no sockets, no HTTP parsing), in its own process: its CPU
# time per call is the app's own cost, and steadier on a shared machine than anything measured over sockets.
APP_HARNESS = """
import asyncio, json, os, sys, tempfile, time
os.environ["COLONY_HOME"] = tempfile.mkdtemp()
from colony.surfaces.gateway import GatewaySettings, create_app

body = sys.argv[2].encode()
headers = [(b"host", b"127.0.0.1:8787"), (b"content-type", b"application/json"),
           (b"content-length", str(len(body)).encode())]
scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
         "path": "/v1/tool_call", "raw_path": b"/v1/tool_call", "query_string": b"", "root_path": "",
         "headers": headers, "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8787)}

async def main():
    app = create_app(GatewaySettings(port=8787, rate_limits=json.loads(sys.argv[1])))  # no call is refused 429
    events, started = asyncio.Queue(), asyncio.Event()
    await events.put({"type": "lifespan.startup"})
    async def lifespan_send(message):
        started.set()
    lifespan = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, events.get, lifespan_send))
    await started.wait()
    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}
    answers = []
    async def send(message):
        answers.append(message)
    for _ in range(2000):
        await app(dict(scope), receive, send)
    assert answers[0]["status"] == 200, answers[:2]
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(5000):
            await app(dict(scope), receive, send)
        best = min(best, (time.process_time() - start) / 5000)
        answers.clear()
    print(best * 1e6)
    await events.put({"type": "lifespan.shutdown"})
    await lifespan

asyncio.run(main())
"""


def app_cpu_microseconds(source: Path | None) -> float:
    """Best-of-5 CPU time of one POST /v1/tool_call through the gateway app alone, from ``source``'s checkout."""
    where = source or REPO
    command = [sys.executable, "-c", APP_HARNESS, UNLIMITED, json.dumps(TOOL_CALL)]
    env = {**os.environ, "PYTHONPATH": str(where), "COLONY_REPO_ROOT": str(where)}
    result = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, check=True)
    return float(result.stdout.strip().splitlines()[-1])


# The in-process comparison from a checkout, in its own process: the p50s of each path, as JSON.
IN_PROCESS_HARNESS = """
import json, sys, tempfile
from pathlib import Path
import anyio
from bench.governance import in_process
from bench.surfaces import ms

samples = anyio.run(in_process, Path(tempfile.mkdtemp()))
print(json.dumps({name: ms(values, 0.5) for name, values in samples.items()}))
"""


def in_process_p50s(source: Path | None) -> dict[str, float]:
    """The p50 ms of each in-process path, measured by ``source``'s checkout (this one when None)."""
    where = source or REPO
    env = {**os.environ, "PYTHONPATH": str(where), "COLONY_REPO_ROOT": str(where), **BUDGETS}
    result = subprocess.run(
        [sys.executable, "-c", IN_PROCESS_HARNESS], cwd=where, env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def report_governance_against(base: Path) -> None:
    """The in-process governance cost now and in the baseline checkout, alternating, side by side."""
    costs: dict[str, list[float]] = {"now": [], "before": []}
    for turn in range(ROUNDS):
        sides = [("now", None), ("before", base)]
        shown = []
        for name, source in sides if turn % 2 == 0 else sides[::-1]:
            p50 = in_process_p50s(source)
            costs[name].append(p50["governed"] - p50["ungoverned"])
            base_p50, governed_p50 = p50["ungoverned"], p50["governed"]
            shown.append(
                f"{name} {costs[name][-1]:.3f} ms (p50 {base_p50:.3f} ungoverned, {governed_p50:.3f} governed)"
            )
        print(f"  in-process run {turn + 1}, cost: {'; '.join(shown)}")
    ratio = [now / before for now, before in zip(costs["now"], costs["before"], strict=True)]
    print(
        f"side-effecting append_note in-process, governance cost now vs before ({BASELINE}):\n"
        f"  now: {spread(costs['now'])}\n  before: {spread(costs['before'])}\n  now/before: {spread(ratio, 'x')}"
    )


def spread(values: list[float], unit: str = "ms") -> str:
    return f"median {statistics.median(values):.3f} {unit} (runs: {', '.join(f'{v:.3f}' for v in values)})"


def report_governance(home: Path) -> None:
    costs: dict[str, list[float]] = {"in-process": [], "three hops": [], "http": []}
    ratios: dict[str, list[float]] = {"in-process": [], "http": []}
    for turn in range(ROUNDS):
        local = anyio.run(in_process, home / f"local{turn}")
        base, governed, hops = (ms(local[name], 0.5) for name in ("ungoverned", "governed", "three hops"))
        costs["in-process"].append(governed - base)
        costs["three hops"].append(hops - base)
        ratios["in-process"].append(governed / base)
        print(
            f"  in-process run {turn + 1}: ungoverned p50 {base:.3f} ms, governed p50 {governed:.3f} ms "
            f"(p99 {ms(local['governed'], 0.99):.3f}), three hops p50 {hops:.3f} ms"
        )
        http = http_governance(home / f"http{turn}")
        base, governed = ms(http["ungoverned"], 0.5), ms(http["governed"], 0.5)
        costs["http"].append(governed - base)
        ratios["http"].append(governed / base)
        print(
            f"  POST /v1/tool_call run {turn + 1}: ungoverned p50 {base:.3f} ms, governed p50 {governed:.3f} ms "
            f"(p99 {ms(http['governed'], 0.99):.3f})"
        )
    print(
        f"side-effecting append_note, governance cost (governed p50 - ungoverned p50, target <= 1.5 ms):\n"
        f"  in-process: {spread(costs['in-process'])}; ratio {spread(ratios['in-process'], 'x')}\n"
        f"  in-process with three hops (an executor plugged in): {spread(costs['three hops'])}\n"
        f"  POST /v1/tool_call: {spread(costs['http'])}; ratio {spread(ratios['http'], 'x')}"
    )


def report_pure(home: Path, base: Path | None) -> None:
    rounds = []
    apps: list[dict[str, float]] = []
    for turn in range(ROUNDS):  # alternate, and swap who goes first, so drift hits both sides alike
        sides = [("now", None), ("before", base)] if base else [("now", None)]
        measured = {}
        app: dict[str, float] = {}
        for name, source in sides if turn % 2 == 0 else sides[::-1]:
            measured[name] = pure_throughput(source, str(home / f"{name}{turn}"))
            app[name] = app_cpu_microseconds(source)
        rounds.append(measured)
        apps.append(app)
        line = ", ".join(
            f"{name} {req:,.0f} req/s (p50 {p50:.3f} ms, server CPU {cpu:.3f} ms/request, app alone "
            f"{app[name]:.1f} us/call)"
            for name, (req, p50, cpu) in measured.items()
        )
        print(f"  run {turn + 1}: {line}")
    now = [r["now"] for r in rounds]
    throughput = statistics.median(n[0] for n in now)
    print(
        f"pure POST /v1/tool_call unit_convert, 16 clients, now: median {throughput:,.0f} req/s, "
        f"server CPU {spread([n[2] for n in now])}/request"
    )
    if base:
        ratio = [r["now"][0] / r["before"][0] for r in rounds]
        cpu = [r["before"][2] / r["now"][2] for r in rounds]
        print(
            f"  before ({BASELINE}): median {statistics.median(r['before'][0] for r in rounds):,.0f} req/s; "
            f"now/before throughput {spread(ratio, 'x')}; before/now server CPU per request {spread(cpu, 'x')}; "
            f"before/now app CPU per call {spread([a['before'] / a['now'] for a in apps], 'x')}"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory)
        base = baseline_checkout(BASELINE, home / "baseline")
        try:
            report_governance(home)
            if base:
                report_governance_against(base)
            report_pure(home, base)
        finally:
            if base:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)
        print(f"load average after the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
