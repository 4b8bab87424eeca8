"""Governance: what the gate costs a side-effecting call, and what the pipeline costs a pure one.

Targets (issue 11): the gate (propose + record, around the same execution) costs at
most 1.5 ms per side-effecting call on this machine; a pure ``/v1/tool_call`` is no
slower than before the one pipeline (3,265 req/s at 16 clients was measured then).

In-process, side by side in one run: the same side-effecting tool (it appends a line
to a file) executed with an authorization and nothing else (ungoverned), and through
``Runtime.call`` (propose, execute, record). Over HTTP: POST /v1/tool_call for it,
and for the pure ``unit_convert`` against this checkout's gateway and, when
``COLONY_BENCH_BASELINE`` names a git ref (default: the commit before the pipeline),
a gateway built from that ref in a temporary worktree.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
import uvloop

from bench.surfaces import TOOL_CALL, concurrent, free_port, ms, request_bytes, sequential, start_gateway
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, KernelProvider, Runtime
from colony.runtime.authorization import Authorization

REPO = Path(__file__).resolve().parents[1]
CALLS = 400
BASELINE = os.environ.get("COLONY_BENCH_BASELINE", "fb4bacf")
CASE = {
    "rationale": "Append the benchmark's line to the notes file for the record",
    "rollback_plan": "Delete the appended line from notes.txt",
    "evidence": {"tests": ["tests/colony/surfaces/test_governance.py"]},
}


def sample_catalog(root: Path) -> Path:
    entries = [
        {
            "name": "append_note",
            "capability": "append_note",
            "capability_fqn": "tests.colony.surfaces.sample_tools.AppendNote",
        },
        {"name": "unit_convert", "capability": "convert_units", "capability_fqn": "tools.unit_convert.UnitConvert"},
    ]
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "tools": entries}))
    return path


async def in_process(home: Path) -> tuple[list[float], list[float]]:
    """Per-call latencies: ungoverned execution, then the governed call of the same tool."""
    os.environ["COLONY_HOME"] = str(home)  # where append_note writes
    kernel = ColonyKernel(KernelSettings(home=home, budget_llm_calls=10**9, budget_runtime_seconds=10**9))
    kernel.set_trust("bench-agent", 0.9)
    runtime = Runtime(Catalog(sample_catalog(home / "repo")), kernels=KernelProvider(kernel))
    tool = runtime.catalog.resolve("append_note")
    request = CallRequest("append_note", {"note": "bench"}, agent_id="bench-agent", **CASE)  # type: ignore[arg-type]
    ungoverned, governed = [], []
    for _ in range(50):  # warm both paths
        await runtime.call(request, LOCAL_OPERATOR)
    for _ in range(CALLS):
        authorization = Authorization._issue(
            proposal_id="p", agent_id="bench-agent", tool="append_note", action="append_note"
        )
        start = time.perf_counter()
        await runtime.executor.run(tool, "append_note", {"note": "bench"}, authorization)
        ungoverned.append(time.perf_counter() - start)
        start = time.perf_counter()
        outcome = await runtime.call(request, LOCAL_OPERATOR)
        governed.append(time.perf_counter() - start)
        assert outcome.status.value == "executed", outcome.verdict
    await runtime.aclose()
    return ungoverned, governed


def baseline_checkout(ref: str, into: Path) -> Path | None:
    result = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(into), ref], capture_output=True, text=True
    )
    return into if result.returncode == 0 else None


def pure_throughput(source: Path | None, home: str) -> tuple[float, float]:
    port = free_port()
    gateway = start_gateway(port, home, 1, source)
    try:
        request = request_bytes("/v1/tool_call", TOOL_CALL, port)
        uvloop.run(sequential(port, request, 300))
        throughput, latencies = uvloop.run(concurrent(port, request))
        return throughput, ms(latencies, 0.5)
    finally:
        gateway.terminate()
        gateway.wait(timeout=10)


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory)
        ungoverned, governed = anyio.run(in_process, home)
        cost = ms(governed, 0.5) - ms(ungoverned, 0.5)
        print(
            f"side-effecting append_note in-process: ungoverned p50 {ms(ungoverned, 0.5):.3f} ms, "
            f"governed (propose + execute + record) p50 {ms(governed, 0.5):.3f} ms, p99 {ms(governed, 0.99):.3f} ms; "
            f"ratio {ms(governed, 0.5) / ms(ungoverned, 0.5):.1f}x, governance cost {cost:.3f} ms/call "
            f"(target <= 1.5 ms)"
        )
        base = baseline_checkout(BASELINE, home / "baseline")
        try:
            rounds = []
            for _ in range(2):  # alternate, so drift on a shared machine hits both sides alike
                now = pure_throughput(None, str(home / "now"))
                before = pure_throughput(base, str(home / "before")) if base else None
                rounds.append((now, before))
            now_best = max(rounds, key=lambda r: r[0][0])[0]
            print(
                f"pure POST /v1/tool_call unit_convert, 16 clients, now: {now_best[0]:,.0f} req/s, "
                f"p50 {now_best[1]:.3f} ms"
            )
            if base:
                before_best = max((r[1] for r in rounds if r[1]), key=lambda b: b[0])
                print(
                    f"  before ({BASELINE}): {before_best[0]:,.0f} req/s, p50 {before_best[1]:.3f} ms; "
                    f"now/before throughput {now_best[0] / before_best[0]:.2f}x"
                )
        finally:
            if base:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)


if __name__ == "__main__":
    main()
