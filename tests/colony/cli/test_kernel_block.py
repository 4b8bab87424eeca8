"""The kernel commands use the saved kernel block on a shared Prefect server, as flows do (a real server)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings

from blocks import ColonyKernelConfig
from tests.services import free_port
from tests.services.prefect import PrefectServer

pytestmark = pytest.mark.prefect_server
COLONY = Path(sys.executable).parent / "colony"


@pytest.fixture
def api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    with temporary_settings({PREFECT_API_URL: prefect_server.api_url}):
        yield prefect_server


def colony(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COLONY), *arguments], env=env, capture_output=True, text=True, timeout=120, check=False)


def status(env: dict[str, str]) -> dict[str, Any]:
    done = colony(env, "kernel", "status", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_colony_kernel_shows_the_kernel_the_block_names(api: PrefectServer, tmp_path: Path) -> None:
    name = f"colony-{uuid4().hex[:8]}"
    shared = tmp_path / "shared.db"
    ColonyKernelConfig(database_url=f"sqlite:///{shared}", budget_llm_calls=42, min_strength=0.05).save(name)
    env = api.env(COLONY_HOME=str(tmp_path / "home"), COLONY_KERNEL_BLOCK=name, COLONY_BUDGET_LLM_CALLS="7")
    assert status(env)["budget_usage"]["llm_calls"]["max"] == 42  # the block wins over this machine's variable
    assert shared.exists() and not (tmp_path / "home" / "kernel.db").exists()
    env["COLONY_KERNEL_BLOCK"] = f"missing-{name}"  # no such block: this machine's environment alone
    assert status(env)["budget_usage"]["llm_calls"]["max"] == 7


def test_an_unreachable_prefect_api_is_named(tmp_path: Path) -> None:
    env = {
        **PrefectServer(api_url=f"http://127.0.0.1:{free_port()}/api", home=tmp_path).env(),
        "COLONY_HOME": str(tmp_path / "home"),
        "PREFECT_CLIENT_MAX_RETRIES": "0",
    }
    done = colony(env, "kernel", "status")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "cannot read the kernel block 'colony'" in done.stderr and "PREFECT_API_URL" in done.stderr
