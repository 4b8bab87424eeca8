"""Gate throughput on PostgreSQL: 1, 2, 4 and 8 processes, this checkout next to a baseline, in one run.

Each process is one agent proposing on its own module and recording every EXECUTE
with its attestation; all share one budget that runs out part-way, so both the
reserve and the refusal paths run. For each checkout and process count a fresh
database in one throwaway cluster (``fsync=off``: the figures are the kernel's,
not the disk's) gets the same work; printed are proposals/s over all processes,
the p99 of one propose + record, and any overspend (there must be none), where the
time goes (CPU per propose + record in the client processes and in the server's
backends), and where the database sessions inside a transaction waited: for their
client, or on a row lock.

``COLONY_BENCH_BASELINE`` names the git ref to compare with (default: the commit before
the kernel's transactions were pipelined); it is checked out in a temporary worktree.
Target (issue 15): at least 1,000 proposals/s in total at 8 processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = os.environ.get("COLONY_BENCH_BASELINE", "0678819")
PROCESSES = (1, 2, 4, 8)
PROPOSALS = 3000  # in total, split over the processes
BUDGET = 2000.0

# Run by ``python -c`` with the checkout under test first on sys.path; uses only the kernel's public API.
_WORKER = r"""
import json, multiprocessing, os, sys, time
from colony.kernel import ColonyKernel, Decision, KernelSettings

url, processes, each, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
PLAN = {
    "action_type": "patch_file",
    "rationale": "Fix the off-by-one error in the branch name parser reported by the nightly run",
    "rollback_plan": "git revert the commit",
    "evidence": json.dumps({"tests": ["tests/test_parser.py::test_slash"]}),
    "budget_estimate": {"llm_calls": 1, "runtime_seconds": 1},
}

def settings():
    return KernelSettings(database_url=url, budget_llm_calls=budget, attestation_secret="bench")

def backends_cpu():
    # CPU seconds of the server processes serving this database (same machine: their /proc entries).
    name, total = url.rsplit("/", 1)[1], 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f" {name} " not in open(f"/proc/{pid}/cmdline").read().replace("\0", " "):
                continue
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total

def work(worker, ready, done, results):
    kernel = ColonyKernel(settings())
    kernel.status()
    agent, target = f"bench-ant-{worker}", f"pkg.module{worker}"
    plan = {**PLAN, "agent_id": agent, "target": target}
    report = {"agent_id": agent, "action_type": "patch_file", "target": target, "actual_outcome": "ok"}
    latencies = []
    ready.wait()
    began, cpu = time.time(), time.process_time()
    for _ in range(each):
        start = time.perf_counter()
        verdict = kernel.propose_action(plan)
        if verdict.decision is Decision.EXECUTE:
            kernel.record_outcome({**report, "tests_passed": True, "llm_calls": 1}, authorization=verdict.authorization)
        latencies.append(time.perf_counter() - start)
    results.put((began, time.time(), time.process_time() - cpu, latencies))
    done.wait()  # the server's CPU is read while every session is still open
    kernel.close()

if __name__ == "__main__":
    setup = ColonyKernel(settings())
    for worker in range(processes):
        setup.set_trust(f"bench-ant-{worker}", 0.9)
    context = multiprocessing.get_context("fork")
    ready, done, results = context.Barrier(processes + 1), context.Barrier(processes + 1), context.Queue()
    workers = [context.Process(target=work, args=(w, ready, done, results)) for w in range(processes)]
    for w in workers:
        w.start()
    ready.wait()  # every worker is connected
    server_before = backends_cpu()
    finished = [results.get() for _ in workers]
    server = backends_cpu() - server_before
    done.wait()
    for w in workers:
        w.join()
    elapsed = max(end for _, end, _, _ in finished) - min(start for start, _, _, _ in finished)
    latencies = sorted(x for *_, batch in finished for x in batch)
    usage = setup.status().budget_usage["llm_calls"]
    print(json.dumps({
        "rate": len(latencies) / elapsed,
        "p99_ms": latencies[int(0.99 * (len(latencies) - 1))] * 1000,
        "overspend": max(0.0, usage.used - usage.max),
        "client_ms": sum(cpu for _, _, cpu, _ in finished) * 1000 / len(latencies),
        "server_ms": server * 1000 / len(latencies),
    }))
"""


def run(source: Path, url: str, processes: int) -> dict[str, float]:
    """One measurement of the checkout at ``source``, with where its database sessions waited."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    arguments = [url, str(processes), str(PROPOSALS // processes), str(BUDGET)]
    with _Waits(url) as waits:
        command = [sys.executable, "-c", _WORKER, *arguments]
        result = subprocess.run(command, env=env, cwd=source, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the gate benchmark failed in {source}: {result.stderr[-2000:]}")
    figures: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures | waits.shares()


class _Waits:
    """Samples the benchmark's sessions (``pg_stat_activity``) every 20 ms while it runs.

    A session inside a transaction waiting for its client is time the client spends in Python
    (or waiting for a core) while holding its row locks; a session waiting on a lock is
    contention. Their shares say which of the two the figures are made of.
    """

    _QUERY = (
        "SELECT state, wait_event_type FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )

    def __init__(self, url: str) -> None:
        self.url = url.replace("+psycopg", "")
        self.counts = {"client": 0, "lock": 0, "all": 0}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> _Waits:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.thread.join()

    def _sample(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            while not self.done.wait(0.02):
                for state, wait in connection.execute(self._QUERY):
                    if state is None or state == "idle":
                        continue
                    self.counts["all"] += 1
                    self.counts["client"] += state == "idle in transaction"
                    self.counts["lock"] += wait == "Lock"

    def shares(self) -> dict[str, float]:
        """Of the samples of sessions in a transaction: waiting for the client, waiting on a lock (%)."""
        total = max(self.counts["all"], 1)
        return {"client_pct": 100 * self.counts["client"] / total, "lock_pct": 100 * self.counts["lock"] / total}


def main() -> None:
    sys.path.insert(0, str(REPO))
    try:
        from tests.services.postgres import ClusterUnavailable, create_database, temporary_cluster
    except ImportError:
        print("gate throughput: skipped (tests.services is not importable)")
        return
    with tempfile.TemporaryDirectory(prefix="colony-gate-") as directory:
        baseline = Path(directory) / "baseline"
        checkout = subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(baseline), BASELINE],
            capture_output=True,
            text=True,
            check=False,
        )
        sources = {"now": REPO} | ({f"before ({BASELINE})": baseline} if checkout.returncode == 0 else {})
        try:
            with temporary_cluster() as server:
                for processes in PROCESSES:
                    line = []
                    for label, source in sources.items():
                        figures = run(source, create_database(server), processes)
                        line.append(
                            f"{label}: {figures['rate']:,.0f}/s, p99 {figures['p99_ms']:.1f} ms, "
                            f"overspend {figures['overspend']:g}, CPU per proposal: client "
                            f"{figures['client_ms']:.2f} ms, server {figures['server_ms']:.2f} ms; in a transaction: "
                            f"waiting for the client {figures['client_pct']:.0f}%, on a lock {figures['lock_pct']:.0f}%"
                        )
                    print(f"PostgreSQL, {processes} process(es): " + "; ".join(line))
        except ClusterUnavailable as error:
            print(f"gate throughput: skipped ({error})")
        finally:
            if checkout.returncode == 0:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(baseline)], check=False)
    print(f"target: at least 1,000 proposals/s in total at 8 processes; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
