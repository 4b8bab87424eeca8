"""The Prefect guide's at-scale path end to end: PostgreSQL, a Prefect server on it, the kernel on it, two workers.

``colony deploy`` sets up the server; two ``prefect worker start --pool colony --limit 4``
processes run a mixed batch (tool calls, gated actions executed, refused, approved and
rejected, ticks). Then one worker dies with its flow-run processes (``SIGKILL``, as a lost
machine) while gated actions are inside their tool: the zombie automation marks those runs
Crashed, the recovery automation schedules them again and the other worker finishes them,
with no person involved. Checked in the kernel: every EXECUTE recorded exactly once, no
reservation left held, one tick per tick run, and a held run resumed on the surviving
worker was not proposed again. Nothing waits a fixed time: every wait polls with a bound.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName, FlowRunFilter
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment
from prefect.filesystems import LocalFileSystem
from prefect.flow_runs import resume_flow_run
from prefect.states import State
from sqlalchemy import select

from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.schema import tables
from flows.gated_action import GatedActionSummary, Outcome
from flows.tool_call import ToolCallResult
from tests.flows.workers import wait_until_suspended
from tests.services.postgres import create_database
from tests.services.prefect import PrefectServer, prefect_api

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SECRET = "at-scale-test-secret"
HEARTBEAT_SECONDS = 5  # beats every 5 s instead of 30, so a lost run is found sooner
ZOMBIE_SECONDS = 20  # four beats: a live run on a busy machine is never judged dead
# A run the lost worker had claimed but not started is crashed this long after its claim. A loaded
# CI machine takes 40 s and more from a claim to a run's first beat: a shorter window crashes live runs.
START_SECONDS = 120
SLOW_RUNS = 5  # more than one worker's limit (4), so both workers hold some
RESULTS_BLOCK = "local-file-system/colony-results"
LEDGER = {
    "target": "ledger.at-scale",
    "rationale": "Record the nightly figures in the ledger file for the audit trail",
    "rollback_plan": "erase_entry removes the written file again",
}
EVIDENCE = {"tests": ["tests/test_ledger.py"]}  # with trust 0.8: EXECUTE; without: HOLD


class Worker:
    """``prefect worker start --pool colony --limit 4`` with its own PREFECT_HOME and COLONY_HOME (a machine)."""

    def __init__(self, name: str, env: dict[str, str], root: Path) -> None:
        self.name = name
        home = root / name
        home.mkdir()
        self.log_path = home / "worker.log"
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [str(BIN / "prefect"), "worker", "start", "--pool", "colony", "--limit", "4", "--name", name],
            cwd=REPO,
            env={**env, "PREFECT_HOME": str(home / "prefect"), "COLONY_HOME": str(home / "colony")},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def running(self) -> set[UUID]:
        """The flow runs whose processes descend from this worker (each carries its id in its environment)."""
        found = set()
        for pid in descendants(self.process.pid):
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:  # ended while we looked
                continue
            for entry in environ:
                if entry.startswith(b"PREFECT__FLOW_RUN_ID="):
                    found.add(UUID(entry.split(b"=", 1)[1].decode()))
        return found

    def kill(self) -> None:
        """The machine is lost: the worker and every flow-run process it started die at once, reporting nothing."""
        for pid in [*descendants(self.process.pid), self.process.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        self.process.wait()

    def tail(self, lines: int = 40) -> str:
        """The end of the worker's log, for a failure's report."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            children = descendants(self.process.pid)
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            for pid in children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
        self.log.close()


def report_workers_on_failure(workers: list[Worker]) -> Callable[..., bool]:
    """An exit callback printing each worker's log tail when the test fails (pytest shows it with the failure)."""

    def report(failure: type[BaseException] | None, *_: object) -> bool:
        if failure is not None:
            for worker in workers:
                print(f"--- {worker.name} ---\n{worker.tail()}")
        return False  # the failure propagates

    return report


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (from /proc: field 4 of ``stat`` is the parent)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, frontier = [], [root]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found.extend(children)
        frontier.extend(children)
    return found


def poll(
    what: str, check: Callable[[], Any], seconds: float, every: float = 1.0, explain: Callable[[], object] = str
) -> Any:
    """``check()``'s first truthy answer, polled within ``seconds``; fails naming ``what`` and ``explain()``."""
    deadline = time.monotonic() + seconds
    while True:
        answer = check()
        if answer:
            return answer
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s {explain()}"
        time.sleep(every)


def state_of(client: SyncPrefectClient, run: UUID) -> State[Any]:
    state = client.read_flow_run(run).state
    assert state is not None
    return state


def finals(client: SyncPrefectClient, runs: list[UUID], seconds: float = 600) -> dict[UUID, State[Any]]:
    """The final state of every run, once all have one; fails naming each run still open and its states."""

    def done() -> dict[UUID, State[Any]] | None:
        states = {run: state_of(client, run) for run in runs}
        return states if all(state.is_final() for state in states.values()) else None

    def still_open() -> dict[UUID, list[str | None]]:
        open_runs = [run for run in runs if not state_of(client, run).is_final()]
        return {run: states_of(client, run) for run in open_runs}

    answer: dict[UUID, State[Any]] = poll("every run reaches a final state", done, seconds, explain=still_open)
    return answer


def gated(agent: str, tool: str, arguments: dict[str, Any], evidence: bool) -> dict[str, Any]:
    request = {**LEDGER, "agent_id": agent, "call": {"tool": tool, "arguments": arguments}}
    return {"request": {**request, "evidence": EVIDENCE} if evidence else request}


def start(deployment: str, parameters: dict[str, Any] | None = None) -> UUID:
    return run_deployment(deployment, parameters=parameters or {}, timeout=0).id


@pytest.fixture
def colony(
    postgres_server: str, prefect_server_factory: Callable[..., AbstractContextManager[PrefectServer]], tmp_path: Path
) -> Iterator[tuple[PrefectServer, KernelSettings, dict[str, str]]]:
    """A Prefect server on PostgreSQL, deployed with ``colony deploy``; the kernel's settings; a worker's env."""
    prefect_url = create_database(postgres_server).replace("+psycopg", "+asyncpg")
    kernel_settings = KernelSettings(database_url=create_database(postgres_server), attestation_secret=SECRET)
    (tmp_path / "prefect-server").mkdir()
    with prefect_server_factory(tmp_path / "prefect-server", prefect_url) as server:
        env = server.env(
            PREFECT_HOME=str(tmp_path / "deployer"),
            COLONY_HOME=str(tmp_path / "deployer-colony"),
            COLONY_DATABASE_URL=kernel_settings.database_url or "",
            COLONY_ATTESTATION_SECRET=SECRET,
            COLONY_HEARTBEAT_SECONDS=str(HEARTBEAT_SECONDS),
            COLONY_ZOMBIE_SECONDS=str(ZOMBIE_SECONDS),
            COLONY_START_SECONDS=str(START_SECONDS),
            COLONY_RESULT_STORAGE=RESULTS_BLOCK,
            PREFECT_WORKER_QUERY_SECONDS="2",
        )
        with prefect_api(server.api_url):
            LocalFileSystem(basepath=str(tmp_path / "shared-results")).save("colony-results", overwrite=True)
            deployed = subprocess.run(
                [str(BIN / "colony"), "deploy"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
            )
            assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]
            yield server, kernel_settings, {key: value for key, value in env.items() if key != "PREFECT_HOME"}


@pytest.mark.timeout(1200)  # two real workers, a dozen flow runs and a lost worker: minutes when the machine is shared
def test_a_lost_worker_costs_no_record_no_double_tick_and_no_leaked_budget(
    colony: tuple[PrefectServer, KernelSettings, dict[str, str]], tmp_path: Path
) -> None:
    _, kernel_settings, env = colony
    kernel = ColonyKernel(kernel_settings)
    agents = ["approver", "rejecter", "resumed", "executor", *(f"slow-{n}" for n in range(SLOW_RUNS))]
    for agent in agents:
        kernel.set_trust(agent, 0.8)
    with ExitStack() as stack, get_client(sync_client=True) as client:
        workers = [Worker(name, env, tmp_path) for name in ("worker-a", "worker-b")]
        for worker in workers:
            stack.callback(worker.stop)
        stack.push(report_workers_on_failure(workers))

        # A mixed batch on both workers.
        conversions = {
            start("tool-call/tool-call", {"call": {"tool": "unit_convert", "arguments": convert}}): convert["value"]
            for convert in ({"value": value, "from_unit": "km", "to_unit": "m"} for value in (1, 2, 3))
        }
        executed = start(
            "gated-action/gated-action",
            gated("executor", "ledger_double", {"path": str(tmp_path / "executed.txt"), "text": "x"}, evidence=True),
        )
        refused = start(
            "gated-action/gated-action",
            gated("stranger", "ledger_double", {"path": str(tmp_path / "refused.txt"), "text": "x"}, evidence=True),
        )
        approved, rejected = (
            start(
                "gated-action/gated-action",
                gated(agent, "ledger_double", {"path": str(tmp_path / f"{agent}.txt"), "text": agent}, evidence=False),
            )
            for agent in ("approver", "rejecter")
        )
        ticks = [start("colony-tick/colony-tick") for _ in range(2)]
        for run in (approved, rejected):
            wait_until_suspended(run)
        resume_flow_run(approved, run_input={"approve": True, "reviewer": "ops@example.org", "note": "fine"})
        resume_flow_run(rejected, run_input={"approve": False, "reviewer": "ops@example.org", "note": "not today"})
        batch = finals(client, [*conversions, executed, refused, approved, rejected, *ticks])
        for run, value in conversions.items():
            result = batch[run].result()
            assert isinstance(result, ToolCallResult) and result.result["value"] == value * 1000
        assert {batch[run].name for run in (executed, approved)} == {"Executed"}
        assert (batch[refused].name, batch[rejected].name) == ("Refused", "Rejected")
        summary = batch[approved].result()
        assert isinstance(summary, GatedActionSummary) and summary.outcome is Outcome.EXECUTED
        assert all(batch[run].is_completed() for run in ticks)

        # A held run waits for a person while gated actions sit inside their tool on both workers.
        resumed_path = tmp_path / "resumed.txt"
        held = start(
            "gated-action/gated-action",
            gated("resumed", "ledger_double", {"path": str(resumed_path), "text": "resumed"}, evidence=False),
        )
        wait_until_suspended(held)
        release = tmp_path / "release"
        slow = {
            start(
                "gated-action/gated-action",
                gated(
                    f"slow-{n}",
                    "slow_ledger_double",
                    {"path": str(tmp_path / f"slow-{n}.txt"), "text": f"slow-{n}", "release": str(release)},
                    evidence=True,
                ),
            ): f"slow-{n}"
            for n in range(SLOW_RUNS)
        }
        poll(
            "every slow action is proposed and inside its tool",
            lambda: (
                all(kernel.proposal_counts(agent).held == 1 for agent in slow.values())
                and set(slow) <= workers[0].running() | workers[1].running()
            ),
            240,
        )
        on_each = [worker.running() & set(slow) for worker in workers]
        assert all(on_each), f"the runs did not spread over both workers: {on_each}"  # --limit 4 < SLOW_RUNS
        lost, survivor = workers if len(on_each[0]) >= len(on_each[1]) else workers[::-1]
        orphaned = lost.running() & set(slow)
        lost.kill()

        # A person approves the held run: only the surviving worker can resume it.
        resume_flow_run(held, run_input={"approve": True, "reviewer": "ops@example.org", "note": "go"})
        release.touch()
        ended = finals(client, [held, *slow], seconds=ZOMBIE_SECONDS + 240)
        assert {state.name for state in ended.values()} == {"Executed"}, ended
        for run in orphaned:  # crashed, scheduled again, finished elsewhere: nobody retried them by hand
            names = states_of(client, run)
            assert "Crashed" in names and "AwaitingRetry" in names, names
            assert client.read_flow_run(run).run_count >= 2
            assert str(run) in survivor.log_path.read_text(errors="replace")  # the worker left alive took it

        # Exactly once, in the kernel everyone shares.
        assert resumed_path.read_text() == "resumed"
        assert kernel.proposal_counts("resumed").total == 1  # the resumed run kept its verdict
        for agent in ("executor", "approver", "resumed", *slow.values()):
            counts = kernel.proposal_counts(agent)
            assert (counts.total, counts.held) == (1, 0), counts
            assert len(kernel.consequence_log(agent)) == 1, agent  # its EXECUTE recorded once
        for agent in slow.values():
            assert (tmp_path / f"{agent}.txt").read_text() == f"{agent}\n"  # the tool ran once
        assert all(usage.reserved == 0 for usage in kernel.status().budget_usage.values())

        # One tick per tick run, scheduled or started by hand, crashed or not.
        [tick_deployment] = client.read_deployments(
            deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=["colony-tick"]))
        )

        def started_ticks() -> list[FlowRun]:
            runs = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(deployment_id={"any_": [tick_deployment.id]})  # type: ignore[arg-type]
            )
            return [run for run in runs if run.run_count > 0 or not state_of(client, run.id).is_scheduled()]

        def tick_runs() -> list[FlowRun] | None:
            started = started_ticks()
            return started if all(state_of(client, run.id).is_final() for run in started) else None

        def ticks_in_flight() -> dict[UUID, list[str | None]]:
            in_flight = [run.id for run in started_ticks() if not state_of(client, run.id).is_final()]
            return {run: states_of(client, run) for run in in_flight}

        # A tick the lost worker had claimed but that never beat (pending, or running before its
        # first beat) is crashed START_SECONDS after its claim: by the lost-start automation, or by
        # a later tick (every 60 s) when Prefect's triggers held the claim's event (a run claimed
        # within five minutes of its scheduling, as every run here is); then run again elsewhere.
        poll("no tick is in flight", tick_runs, START_SECONDS + 240, explain=ticks_in_flight)
        client.pause_deployment(tick_deployment.id)
        started = poll("no tick is in flight once paused", tick_runs, 240, explain=ticks_in_flight)
        completed = {run.id for run in started if state_of(client, run.id).is_completed()}
        assert len(completed) >= len(ticks)
        # Every tick is keyed by its run and applied once. A run may tick and not end
        # Completed in the poll's view (it crashed after its tick and was not scheduled
        # again, or it finished after the poll looked): it ticked once all the same.
        applied = applied_tick_runs(kernel)
        assert kernel.status().tick_count == len(applied)
        assert completed <= applied
        runs = {run.id for run in started_ticks()}
        assert applied <= runs, {run: states_of(client, run) for run in applied - runs}
    kernel.close()


def applied_tick_runs(kernel: ColonyKernel) -> set[UUID]:
    """The flow runs whose ticks the kernel applied, from the keys it keeps (``flow-run:<id>``)."""
    keys = kernel.store.run(lambda connection: connection.execute(select(tables.ticks.c.tick_key)).scalars().all())
    return {UUID(key.removeprefix("flow-run:")) for key in keys}


def states_of(client: SyncPrefectClient, run: UUID) -> list[str | None]:
    """The names of a run's states, oldest first: what a failure shows."""
    return [state.name for state in client.read_flow_run_states(run)]
