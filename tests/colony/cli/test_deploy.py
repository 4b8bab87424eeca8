"""``colony deploy`` against a real ``prefect server``: one idempotent step sets up a shared server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client

from colony.cli.deploy import DEFAULT_WORKER_LIMIT, WORK_POOL
from colony.cli.zombies import ZOMBIE_AUTOMATION
from flows.deployments import FLOW_RUN_ENV
from tests.services.prefect import PrefectServer, prefect_api

BIN = Path(sys.executable).parent
DEPLOYMENTS = [
    "colony-tick/colony-tick",
    "pruning-report/pruning-report",
    "gated-action/gated-action",
    "tool-call/tool-call",
    "hpc-job/hpc-job",
    "agent-run/agent-run",
]
BLOCK = "colony-deploy-test"  # not the default name: other tests' flows on this server load that one


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with prefect_api(prefect_server.api_url):
        yield prefect_server


def colony_deploy(server: PrefectServer, home: Path) -> str:
    result = subprocess.run(
        [str(BIN / "colony"), "deploy"],
        env=server.env(COLONY_HOME=str(home), COLONY_SETTINGS_BLOCK=BLOCK, COLONY_BUDGET_LLM_CALLS="42"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_deploy_twice_leaves_one_of_everything(api: PrefectServer, tmp_path: Path) -> None:
    colony_deploy(api, tmp_path)
    output = colony_deploy(api, tmp_path)
    assert f"prefect worker start --pool {WORK_POOL} --limit {DEFAULT_WORKER_LIMIT}" in output
    with get_client(sync_client=True) as client:
        try:
            pool = client.read_work_pool(WORK_POOL)
            [automation] = client.read_automations_by_name(ZOMBIE_AUTOMATION)
            deployed = [client.read_deployment_by_name(name) for name in DEPLOYMENTS]
            block = client.read_block_document_by_name(BLOCK, block_type_slug="colony-config")
        finally:  # leave the server as found, for the tests that serve the same deployments
            for name in DEPLOYMENTS:
                client.delete_deployment(client.read_deployment_by_name(name).id)
            client.delete_block_document(client.read_block_document_by_name(BLOCK, "colony-config").id)
    assert pool.type == "process"
    assert "prefect.flow-run.Suspended" in automation.trigger.expect  # type: ignore[union-attr]
    for deployment in deployed:
        assert deployment.work_pool_name == WORK_POOL
        assert deployment.job_variables == {"env": FLOW_RUN_ENV}  # the detachable console
    assert block.data["settings"]["kernel"]["budget_llm_calls"] == 42  # saved from this environment's settings


@pytest.mark.parametrize(
    ("arguments", "unset", "named"),
    [([], "PREFECT_API_URL", "PREFECT_API_URL"), (["--project", "/"], "", "project")],
    ids=["no-server", "no-prefect-yaml"],
)
def test_deploy_without_what_it_needs_names_it(
    api: PrefectServer, tmp_path: Path, arguments: list[str], unset: str, named: str
) -> None:
    env = {key: value for key, value in api.env(PREFECT_HOME=str(tmp_path)).items() if key != unset}
    result = subprocess.run(
        [str(BIN / "colony"), "deploy", *arguments], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 1 and named in result.stderr, result.stdout + result.stderr
