"""Audit log: what appending one hash-chained entry per decision adds to a governed call.

Side by side in one run: ``bench.governance``'s in-process measurement (the same
side-effecting tool ungoverned and through ``Runtime.call``) in this checkout and in
the commit before the audit log (``COLONY_BENCH_AUDIT_BASELINE``, extracted with ``git
archive`` into a temporary directory), alternating rounds so drift on a shared machine
hits both sides alike. The figure is the difference of the governance costs (governed
p50 - ungoverned p50), median of the rounds. Target: governance <= 1.5 ms per call.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
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
    ungoverned, governed = anyio.run(in_process, Path(home))
print(json.dumps({"ungoverned": ms(ungoverned, 0.5), "governed": ms(governed, 0.5)}))
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


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        base = extract(BASELINE, Path(directory))
        now, before = [], []
        for _ in range(ROUNDS):
            now.append(measure(REPO))
            before.append(measure(base))

    def cost(figures: list[dict[str, float]]) -> float:
        return statistics.median(f["governed"] - f["ungoverned"] for f in figures)

    def governed(figures: list[dict[str, float]]) -> float:
        return statistics.median(f["governed"] for f in figures)

    print(
        f"governed append_note p50, median of {ROUNDS} alternating rounds: now {governed(now):.3f} ms, "
        f"before the audit log ({BASELINE}) {governed(before):.3f} ms"
    )
    print(
        f"governance cost per call: now {cost(now):.3f} ms, before {cost(before):.3f} ms; "
        f"the audit log adds {cost(now) - cost(before):+.3f} ms/call (target: governance <= 1.5 ms)"
    )


if __name__ == "__main__":
    main()
