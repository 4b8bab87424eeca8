"""Every command runs on the settings block a shared Prefect server keeps, as flows do (a real server).

Each command here is a process of its own, like a second machine: ``colony blocks save``
writes the block from one environment, and the others read it whatever their own
``COLONY_*`` say (but for their paths on disk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast
from uuid import uuid4

import httpx
import pytest

from blocks import ColonyConfig
from colony.errors import SettingsError
from colony.settings import ColonySettings
from tests.services import free_port
from tests.services.prefect import PrefectServer, prefect_api
from tests.services.upstream import Upstream, hostile_stdio

COLONY = Path(sys.executable).parent / "colony"
GATEWAY_START_SECONDS = 60


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with prefect_api(prefect_server.api_url):
        yield prefect_server


@pytest.fixture
def block_name() -> str:
    return f"colony-{uuid4().hex[:8]}"


def colony(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COLONY), *arguments], env=env, capture_output=True, text=True, timeout=120, check=False)


def budget_max(env: dict[str, str]) -> float:
    done = colony(env, "kernel", "status", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    status: dict[str, Any] = json.loads(done.stdout)
    return float(status["budget_usage"]["llm_calls"]["max"])


def save_block(name: str, **variables: str) -> None:
    """What `colony blocks save` does, from ``variables`` over this process's environment."""
    saved = dict(os.environ)
    os.environ.update(variables)
    try:
        ColonyConfig.from_settings(ColonySettings.from_env()).save(name, overwrite=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_saved_block_is_what_colony_kernel_shows(api: PrefectServer, tmp_path: Path, block_name: str) -> None:
    shared = tmp_path / "shared.db"
    saver = api.env(
        COLONY_HOME=str(tmp_path / "saver"),
        COLONY_SETTINGS_BLOCK=block_name,
        COLONY_DATABASE_URL=f"sqlite:///{shared}",
        COLONY_BUDGET_LLM_CALLS="42",
    )
    done = colony(saver, "blocks", "save")
    assert done.returncode == 0 and repr(block_name) in done.stdout, done.stdout + done.stderr
    other = api.env(COLONY_HOME=str(tmp_path / "other"), COLONY_SETTINGS_BLOCK=block_name, COLONY_BUDGET_LLM_CALLS="7")
    assert budget_max(other) == 42  # the block, whole, over this machine's variables
    assert shared.exists() and not (tmp_path / "other" / "kernel.db").exists()

    config = cast(ColonyConfig, ColonyConfig.load(block_name))  # a change in the block, as the Prefect UI makes
    kernel = config.settings.kernel.model_copy(update={"budget_llm_calls": 99})
    config.settings = config.settings.model_copy(update={"kernel": kernel})
    config.save(block_name, overwrite=True)
    assert budget_max(other) == 99

    other["COLONY_SETTINGS_BLOCK"] = f"missing-{block_name}"  # no such block: this machine's environment alone
    assert budget_max(other) == 7


def test_the_older_block_variable_still_names_the_block(api: PrefectServer, tmp_path: Path, block_name: str) -> None:
    save_block(block_name, COLONY_BUDGET_LLM_CALLS="42")
    assert budget_max(api.env(COLONY_HOME=str(tmp_path), COLONY_KERNEL_BLOCK=block_name)) == 42


def test_the_gateway_and_its_workers_run_on_the_blocks_settings(
    api: PrefectServer, tmp_path: Path, block_name: str
) -> None:
    save_block(
        block_name,
        COLONY_GATEWAY_TOKENS='{"block-token": {"agent": "ops", "capabilities": ["*"], "operator": true}}',
        COLONY_DATABASE_URL=f"sqlite:///{tmp_path / 'shared.db'}",
        COLONY_BUDGET_LLM_CALLS="42",
    )
    port = free_port()
    env = api.env(COLONY_HOME=str(tmp_path / "gateway"), COLONY_SETTINGS_BLOCK=block_name)
    command = [str(COLONY), "gateway", "--port", str(port), "--workers", "2"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(process, url)
        status = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "colony_status"}}
        for _ in range(8):  # requests spread over both workers: each holds the block's tokens and kernel
            assert httpx.get(f"{url}/v1/catalog", timeout=10).status_code == 401
            answer = httpx.post(f"{url}/mcp", json=status, headers={"authorization": "Bearer block-token"}, timeout=30)
            assert answer.status_code == 200, answer.text
            assert answer.json()["result"]["structuredContent"]["budget_usage"]["llm_calls"]["max"] == 42
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr:
            process.stderr.close()


def wait_for_health(process: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + GATEWAY_START_SECONDS
    while True:
        if process.poll() is not None:
            error = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"colony gateway exited with {process.returncode}: {error[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "colony gateway did not answer /health"
        time.sleep(0.2)


def test_blocks_save_shares_the_connected_mcp_servers_with_every_machine(
    api: PrefectServer, tmp_path: Path, block_name: str
) -> None:
    pinned_here = Upstream(tmp_path / "saver")
    pinned_here.connect({"hostile": hostile_stdio(env={"HOSTILE_STATE": str(tmp_path / "state")})})
    saver = api.env(COLONY_HOME=str(pinned_here.home), COLONY_SETTINGS_BLOCK=block_name)
    done = colony(saver, "blocks", "save")
    assert done.returncode == 0, done.stdout + done.stderr
    other = api.env(COLONY_HOME=str(tmp_path / "other"), COLONY_SETTINGS_BLOCK=block_name)
    called = colony(other, "tools", "call", "hostile__lookup", '{"key": "k"}', "--json")
    assert called.returncode == 0 and "value of k" in called.stdout, called.stdout + called.stderr
    assert not (tmp_path / "other" / "mcp-servers.json").exists()


def test_blocks_register_and_save_need_what_they_name(api: PrefectServer, tmp_path: Path) -> None:
    registered = colony(api.env(COLONY_HOME=str(tmp_path)), "blocks", "register")
    assert registered.returncode == 0 and "Colony Config" in registered.stdout, registered.stdout + registered.stderr
    no_server = {key: value for key, value in api.env(PREFECT_HOME=str(tmp_path)).items() if key != "PREFECT_API_URL"}
    done = colony(no_server, "blocks", "save")
    assert done.returncode == 1 and "PREFECT_API_URL names no Prefect server" in done.stderr, done.stderr
    bad = colony(api.env(COLONY_HOME=str(tmp_path), COLONY_BUDGET_LLM_CALLS="lots"), "blocks", "save")
    assert bad.returncode == 1 and "COLONY_BUDGET_LLM_CALLS" in bad.stderr, bad.stderr


def test_hpc_serve_names_a_block_that_is_not_there(api: PrefectServer, tmp_path: Path, block_name: str) -> None:
    done = colony(api.env(COLONY_HOME=str(tmp_path)), "hpc", "serve", "--block", block_name)
    assert done.returncode == 1 and f"no settings block {block_name!r}" in done.stderr, done.stdout + done.stderr


@pytest.mark.slow
def test_an_unreachable_prefect_api_is_named(tmp_path: Path) -> None:
    api_url = f"http://127.0.0.1:{free_port()}/api"
    env = {
        **PrefectServer(api_url=api_url, home=tmp_path).env(),
        "COLONY_HOME": str(tmp_path / "home"),
        "PREFECT_CLIENT_MAX_RETRIES": "0",
    }
    commands = (["kernel", "status"], ["mcp"], ["sandbox", "roles"])
    # Side by side: each spends over a second in the Prefect client's own connection retries.
    started = [
        subprocess.Popen([str(COLONY), *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for command in commands
    ]
    for process in started:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 1, out + err
        assert "cannot read the settings block 'colony'" in err and api_url in err, err


def test_a_gateway_worker_started_by_hand_is_told_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from colony.cli.settings import WORKER_SETTINGS_VARIABLE, settings_from_parent

    monkeypatch.delenv(WORKER_SETTINGS_VARIABLE, raising=False)
    with pytest.raises(SettingsError, match=f"{WORKER_SETTINGS_VARIABLE} is not set.*--workers"):
        settings_from_parent()
