"""Kernel speed: propose_action on a SQLite file vs in-memory, tick cost vs field size (PostgreSQL: gate_throughput).

Run: ``python -m bench.kernel`` (or ``python -m bench``). Prints figures, never asserts.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import insert, update

from colony.kernel import ColonyKernel, Decision, KernelSettings
from colony.kernel.pheromones import expiry_tick, keep_fraction
from colony.kernel.store import tables

PLAN = {
    "agent_id": "bench-ant",
    "action_type": "patch_file",
    "target": "pkg.parser",
    "rationale": "Fix the off-by-one error in the branch name parser reported by the nightly run",
    "rollback_plan": "git revert the commit",
    "evidence": json.dumps({"tests": ["tests/test_parser.py::test_slash"]}),
    "budget_estimate": {"llm_calls": 1, "runtime_seconds": 1},
}
PROPOSALS = 3000
BIG_BUDGET = 1e12


def _kernel(url: str) -> ColonyKernel:
    kernel = ColonyKernel(
        KernelSettings(database_url=url, budget_llm_calls=BIG_BUDGET, budget_runtime_seconds=BIG_BUDGET)
    )
    kernel.set_trust("bench-ant", 0.3)
    return kernel


def _proposals(url: str, count: int) -> tuple[float, float, float, float]:
    """(proposals/s, p50 ms, p99 ms, CPU µs per proposal) of ``count`` EXECUTE verdicts.

    Each verdict reserves budget and carries a signed authorization. The CPU time (user +
    system, this process) shows the cost apart from what other processes on the machine take.
    """
    kernel = _kernel(url)
    for _ in range(100):  # warm the statement cache
        kernel.propose_action(PLAN)
    latencies = []
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        begin = time.perf_counter()
        verdict = kernel.propose_action(PLAN)
        latencies.append(time.perf_counter() - begin)
        assert verdict.decision is Decision.EXECUTE
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    kernel.close()
    latencies.sort()
    p50, p99 = latencies[len(latencies) // 2] * 1e3, latencies[int(len(latencies) * 0.99)] * 1e3
    return count / elapsed, p50, p99, cpu / count * 1e6


def bench_propose(directory: Path) -> None:
    print(f"(load average now: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores)")
    rows = {"SQLite file": f"sqlite:///{directory / 'propose.db'}", "SQLite :memory:": "sqlite://"}
    measured = {name: _proposals(url, PROPOSALS) for name, url in rows.items()}
    for name, (rate, p50, p99, cpu) in measured.items():
        print(f"propose_action, {name:15}: {rate:6.0f}/s  p50 {p50:.2f} ms  p99 {p99:.2f} ms  CPU {cpu:.0f} µs each")
    (file_rate, *_), (memory_rate, *_) = measured.values()
    print(f"  file / memory throughput ratio: {file_rate / memory_rate:.2f}")


def _field(url: str, live: int, expiring_per_tick: int, ticks: int) -> ColonyKernel:
    """A field of ``live`` traces of which ``expiring_per_tick`` expire at each of the next ``ticks`` ticks."""
    kernel = ColonyKernel(KernelSettings(database_url=url))
    expiring = expiring_per_tick * ticks
    rows = []
    for index in range(live):
        if index < expiring:
            ticks_left = 1 + index // expiring_per_tick
            strength, rate = 0.0101 / keep_fraction(1.0) ** (ticks_left - 1), 1.0
        else:
            strength, rate = 10.0, 0.2
        import math

        rows.append(
            {
                "location": f"pkg.module{index}",
                "signal_type": "dependency",
                "strength": strength,
                "written_tick": 0,
                "expires_tick": expiry_tick(strength, rate, 0, 0.01),
                "rank_key": math.log(strength),
                "decay_rate": rate,
                "source": "runtime",
                "evidence": "{}",
                "updated_at": 0.0,
                "deposits": 1,
            }
        )
        if len(rows) == 50_000:
            _insert_traces(kernel, rows)
            rows = []
    if rows:
        _insert_traces(kernel, rows)
    kernel.store.run(lambda c: c.execute(update(tables.kernel_state).values(trace_count=live)))
    return kernel


def _insert_traces(kernel: ColonyKernel, rows: list[dict[str, Any]]) -> None:
    kernel.store.run(lambda c: c.execute(insert(tables.pheromones), rows))


def _tick_cost(kernel: ColonyKernel, ticks: int) -> float:
    costs = []
    for _ in range(ticks):
        begin = time.perf_counter()
        kernel.tick()
        costs.append(time.perf_counter() - begin)
    return statistics.median(costs)


def bench_tick(directory: Path) -> None:
    ticks, per_tick = 8, 50
    small = _field(f"sqlite:///{directory / 'small.db'}", 1_000, per_tick, ticks)
    began = time.perf_counter()
    large = _field(f"sqlite:///{directory / 'large.db'}", 1_000_000, per_tick, ticks)
    print(f"  (built the 1,000,000-trace field in {time.perf_counter() - began:.0f} s)")
    small_cost, large_cost = _tick_cost(small, ticks), _tick_cost(large, ticks)
    assert large.status().pheromone_summary.total_signals == 1_000_000 - ticks * per_tick
    print(f"tick, 1,000 live traces    : {small_cost * 1e3:.2f} ms (median of {ticks}, {per_tick} expire per tick)")
    print(f"tick, 1,000,000 live traces: {large_cost * 1e3:.2f} ms")
    print(f"  1M / 1k tick cost ratio: {large_cost / small_cost:.2f} (target <= 3)")
    small.close()
    large.close()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="colony-bench-") as directory:
        bench_propose(Path(directory))
        bench_tick(Path(directory))


if __name__ == "__main__":
    main()
