"""End to end against a real ``prefect server``: ``colony up`` and ``prefect deploy --all``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
from prefect.deployments import run_deployment
from prefect.flow_runs import resume_flow_run
from prefect.states import State

from colony.cli.zombies import ZOMBIE_AUTOMATION
from colony.kernel import ColonyKernel, KernelSettings
from tests.flows.workers import wait_until_suspended
from tests.services import free_port
from tests.services.prefect import PrefectServer, migrated_database, prefect_api

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
DEPLOYMENTS = [
    "colony-tick/colony-tick",
    "pruning-report/pruning-report",
    "gated-action/gated-action",
    "tool-call/tool-call",
    "hpc-job/hpc-job",
    "agent-run/agent-run",
]


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with prefect_api(prefect_server.api_url):
        yield prefect_server


def wait_for_deployments(names: list[str], process: subprocess.Popen[bytes], log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            assert process.poll() is None, f"colony up exited early: {log.read_text()[-3000:]}"
            found = set()
            for name in names:
                try:
                    client.read_deployment_by_name(name)
                    found.add(name)
                except Exception:  # noqa: BLE001 - not there yet
                    pass
            if found == set(names):
                return
            time.sleep(1)
    raise AssertionError(f"deployments never appeared: {names}")


def test_colony_up_serves_the_deployments_and_runs_them(api: PrefectServer, tmp_path: Path, doubles_root: Path) -> None:
    home = tmp_path / "colony"
    log = (tmp_path / "up.log").open("wb")
    gateway_port = free_port()
    process = subprocess.Popen(
        [str(BIN / "colony"), "up", "--tick-interval", "3600", "--gateway-port", str(gateway_port)],
        cwd=REPO,
        # The gateway child imports the catalog's test doubles (tests.doubles) from the checkout.
        # Runs are polled for every second, not every ten: the test waits on three of them in turn.
        env=api.env(
            COLONY_HOME=str(home),
            COLONY_REPO_ROOT=str(doubles_root),
            PYTHONPATH=str(REPO),
            PREFECT_RUNNER_POLL_FREQUENCY="1",
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_deployments(DEPLOYMENTS, process, log=tmp_path / "up.log")
        gateway = f"http://127.0.0.1:{gateway_port}"
        assert httpx.get(f"{gateway}/health", timeout=10).json()["status"] == "ok"
        with get_client(sync_client=True) as client:
            assert len(client.read_automations_by_name(ZOMBIE_AUTOMATION)) == 1
        arguments = {"value": 2, "from_unit": "km", "to_unit": "m"}
        call = run_deployment(
            "tool-call/tool-call", parameters={"call": {"tool": "unit_convert", "arguments": arguments}}, timeout=180
        )
        tick = run_deployment("colony-tick/colony-tick", timeout=180)
        assert call.state is not None and call.state.is_completed(), call.state
        assert tick.state is not None and tick.state.is_completed(), tick.state
        kernel = ColonyKernel(KernelSettings(home=home))
        assert kernel.status().tick_count >= 1
        with get_client(sync_client=True) as client:
            artifacts = client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[tick.id]))
            )
        assert {"colony-signals", "colony-budget", "colony-roles", "colony-status"} <= {a.key for a in artifacts}
        approve_a_held_action_of_a_deployment(kernel, tmp_path / "entry.txt")
    finally:
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        code = process.wait(timeout=120)
        log.close()
    output = (tmp_path / "up.log").read_text()
    assert f"Prefect UI:  {api.api_url.removesuffix('/api')}" in output
    assert f"Gateway:     {gateway}" in output and f"MCP:         {gateway}/mcp" in output
    assert code == 0 and "Colony stopped." in output, output[-3000:]
    with pytest.raises(httpx.TransportError):  # Ctrl-C stopped the gateway too
        httpx.get(f"{gateway}/health", timeout=2)


@pytest.mark.prefect  # colony up starts a Prefect server of its own
@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_up_on_another_port_serves_its_ui_and_leaves_no_server_behind(tmp_path: Path, stop: signal.Signals) -> None:
    port, gateway_port = free_port(), free_port()
    environment = {
        key: value for key, value in os.environ.items() if key not in {"PREFECT_API_URL", "PREFECT_UI_API_URL"}
    }
    environment.update(PREFECT_HOME=str(tmp_path / "prefect"), COLONY_HOME=str(tmp_path / "colony"))
    migrated_database(tmp_path / "prefect" / "prefect.db")  # where colony up's server keeps its state, migrated
    log = tmp_path / "up.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(BIN / "colony"), "up", "--port", str(port), "--gateway-port", str(gateway_port)],
            cwd=REPO,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_text(log, "Colony is up.", process)
        settings = httpx.get(f"http://127.0.0.1:{port}/ui-settings", timeout=10).json()
        assert settings["api_url"] == f"http://127.0.0.1:{port}/api"
        children = {pid: command_of(pid) for pid in children_of(process.pid)}  # and any flow run being served
        servers = [pid for pid, command in children.items() if "server start" in command or "gateway" in command]
        assert len(servers) == 2, children  # the Prefect server and the gateway
    finally:
        process.send_signal(stop)  # SIGKILL: no cleanup code of colony up runs
        code = process.wait(timeout=120)
    if stop == signal.SIGTERM:
        assert code == 0 and "Colony stopped." in log.read_text(), log.read_text()[-3000:]
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in servers) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(alive(pid) for pid in servers), log.read_text()[-3000:]


def wait_for_text(log: Path, text: str, process: subprocess.Popen[bytes], seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while text not in log.read_text():
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...), or None when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def children_of(parent: int) -> list[int]:
    pids = (int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())
    return [pid for pid in pids if (fields := _stat(pid)) is not None and int(fields[1]) == parent]


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def wait_for_state(flow_run_id: UUID, done: Callable[[State[Any]], bool], seconds: float = 180) -> State[Any]:
    deadline = time.monotonic() + seconds
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            state = client.read_flow_run(flow_run_id).state
            if state is not None and done(state):
                return state
            time.sleep(1)
    raise AssertionError(f"flow run {flow_run_id} never reached the state wanted")


def approve_a_held_action_of_a_deployment(kernel: ColonyKernel, path: Path) -> None:
    """A HOLD suspends the deployment's run (no process waits); approval through the API resumes it."""
    kernel.set_trust("engineer-9", 0.8)
    request = {
        "agent_id": "engineer-9",
        "call": {"tool": "ledger_double", "arguments": {"path": str(path), "text": "figures"}},
        "target": "ledger.served",
        "rationale": "Record the nightly figures in the ledger file for the audit trail",
        "rollback_plan": "erase_entry removes the written file again",
    }
    run = run_deployment("gated-action/gated-action", parameters={"request": request}, timeout=0)
    suspended = wait_until_suspended(run.id)
    assert suspended.name == "Suspended" and not path.exists()
    resume_flow_run(run.id, run_input={"approve": True, "reviewer": "ops@example.org", "note": "fine"})
    final = wait_for_state(run.id, lambda state: state.is_final())
    assert final.is_completed(), final
    assert path.read_text() == "figures"
    [consequence] = kernel.consequence_log("engineer-9")
    assert consequence.tests_passed and consequence.human_feedback == 1.0


def test_prefect_deploy_all_works_as_written(api: PrefectServer) -> None:
    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name="colony", type="process"), overwrite=True)
    result = subprocess.run(
        [str(BIN / "prefect"), "--no-prompt", "deploy", "--all"],
        cwd=REPO,
        env=api.env(PWD=str(REPO)),
        capture_output=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout.decode()[-3000:] + result.stderr.decode()[-3000:]
    with get_client(sync_client=True) as client:
        deployed = {name: client.read_deployment_by_name(name) for name in DEPLOYMENTS}
        for deployment in deployed.values():  # leave the server as found, for other tests that serve
            client.delete_deployment(deployment.id)
    assert all(deployment.work_pool_name == "colony" for deployment in deployed.values())
    [tick_schedule] = deployed["colony-tick/colony-tick"].schedules
    assert tick_schedule.schedule.interval.total_seconds() == 60  # type: ignore[union-attr]
    [pruning_schedule] = deployed["pruning-report/pruning-report"].schedules
    assert pruning_schedule.schedule.cron == "0 3 * * *"  # type: ignore[union-attr]
    assert deployed["gated-action/gated-action"].schedules == []
