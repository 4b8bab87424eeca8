"""Audit log: what appending one hash-chained entry per decision adds to a governed call.

Side by side in one run: ``bench.governance``'s in-process measurement (the same
side-effecting tool ungoverned and through ``Runtime.call``) in this checkout and in
the commit before the audit log (``COLONY_BENCH_AUDIT_BASELINE``, extracted with ``git
archive`` into a temporary directory), alternating rounds so drift on a shared machine
hits both sides alike. The figure is the difference of the governance costs (governed
p50 - ungoverned p50), median of the rounds. Target: governance <= 1.5 ms per call.

On a busy machine the two interpreters see different load, so a second figure is taken
in one process, call by call: ``propose_action`` with its append, then with the append
skipped (``AuditLog.append`` swapped for a no-op), alternating, so both see the same noise;
on SQLite, and on PostgreSQL when ``COLONY_BENCH_DATABASE_URL`` names an empty database.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = os.environ.get("COLONY_BENCH_AUDIT_BASELINE", "332e99b")
ROUNDS = 3
_MEASURE = """
import json, sys, tempfile
from pathlib import Path
import anyio
from bench.governance import in_process
from bench.surfaces import ms
with tempfile.TemporaryDirectory() as home:
    samples = anyio.run(in_process, Path(home))
print(json.dumps({"ungoverned": ms(samples["ungoverned"], 0.5), "governed": ms(samples["governed"], 0.5)}))
"""


def measure(source: Path) -> dict[str, float]:
    """One in-process governance measurement in a fresh interpreter running the checkout at ``source``."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE], cwd=source, env=env, capture_output=True, text=True, check=True
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def extract(ref: str, into: Path) -> Path:
    """The tree of ``ref`` in ``into`` (no worktree: nothing to clean up in the repository)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def alternating(baseline: str, rounds: int) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """``rounds`` measurements of this checkout and of ``baseline``, alternating: (now, before)."""
    with tempfile.TemporaryDirectory() as directory:
        base = extract(baseline, Path(directory))
        now, before = [], []
        for _ in range(rounds):
            now.append(measure(REPO))
            before.append(measure(base))
    return now, before


def governance_cost(figures: list[dict[str, float]]) -> float:
    """The median governance cost (governed p50 - ungoverned p50) of ``figures``, in ms."""
    return statistics.median(f["governed"] - f["ungoverned"] for f in figures)


def interleaved(database_url: str | None = None, calls: int = 600) -> tuple[float, float]:
    """p50 of propose_action with and without the audit append, alternating call by call (ms)."""
    from unittest import mock

    from bench.surfaces import ms
    from colony.kernel import ColonyKernel, KernelSettings
    from colony.kernel import kernel as kernel_module

    plan = {
        "agent_id": "bench-agent",
        "action_type": "append_note",
        "target": "tool:append_note",
        "rationale": "Append the benchmark's line to the notes file for the record",
        "rollback_plan": "Delete the appended line from notes.txt",
        "evidence": '{"tests": ["tests/colony/surfaces/test_governance.py"]}',
    }
    with tempfile.TemporaryDirectory() as home:
        settings = KernelSettings(
            home=Path(home), database_url=database_url, budget_llm_calls=10**9, budget_runtime_seconds=10**9
        )
        kernel = ColonyKernel(settings)
        kernel.set_trust("bench-agent", 0.9)
        with_log: list[float] = []
        without: list[float] = []
        skipped = mock.patch.object(kernel_module.AuditLog, "append", staticmethod(lambda *_: []))
        for n in range(calls + 50):
            for timings, patch in ((with_log, None), (without, skipped)):
                start = time.perf_counter()
                if patch is None:
                    kernel.propose_action(plan)
                else:
                    with patch:
                        kernel.propose_action(plan)
                if n >= 50:  # warmed up
                    timings.append(time.perf_counter() - start)
        kernel.close()
    return ms(with_log, 0.5), ms(without, 0.5)


def main() -> None:
    for name, url in (("SQLite", None), ("PostgreSQL", os.environ.get("COLONY_BENCH_DATABASE_URL"))):
        if name == "PostgreSQL" and not url:
            print("PostgreSQL: set COLONY_BENCH_DATABASE_URL to an empty database to measure it too")
            continue
        with_log, without = interleaved(url)
        print(
            f"{name} propose_action p50, interleaved in one process: with the audit append {with_log:.3f} ms, "
            f"without {without:.3f} ms: the append adds {with_log - without:+.3f} ms per decision"
        )
    now, before = alternating(BASELINE, ROUNDS)

    def governed(figures: list[dict[str, float]]) -> float:
        return statistics.median(f["governed"] for f in figures)

    print(
        f"governed append_note p50, median of {ROUNDS} alternating rounds: now {governed(now):.3f} ms, "
        f"before the audit log ({BASELINE}) {governed(before):.3f} ms"
    )
    cost_now, cost_before = governance_cost(now), governance_cost(before)
    print(
        f"governance cost per call: now {cost_now:.3f} ms, before {cost_before:.3f} ms; "
        f"the audit log adds {cost_now - cost_before:+.3f} ms/call (target: governance <= 1.5 ms)"
    )


if __name__ == "__main__":
    main()
