"""The shared container: started lazily, reused, removed at shutdown, at exit and when its owner dies."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.api.client import APIClient

from colony.sandbox import ownership, pool
from colony.sandbox.ownership import OWNER_PID, SANDBOX
from tests.colony.sandbox.conftest import TightShell, container_of, run
from tests.security.test_reaping import engine_error, orphans, own_host

REPO = Path(__file__).resolve().parents[3]


def _exists(client: Any, container_id: str) -> bool:
    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


def test_container_starts_lazily_and_is_reused(fresh_shell: TightShell, docker_client: Any) -> None:
    assert container_of(fresh_shell) is None  # constructing the tool starts nothing
    first = run(fresh_shell, "echo one")
    started = container_of(fresh_shell)
    assert first["stdout"] == "one\n" and started is not None
    second = run(fresh_shell, "echo two")
    assert second["stdout"] == "two\n"
    assert container_of(fresh_shell) == started
    labels = docker_client.containers.get(started).labels
    assert labels[SANDBOX] == "1" and labels[OWNER_PID] == str(os.getpid())


def test_container_is_hardened(fresh_shell: TightShell, docker_client: Any) -> None:
    run(fresh_shell, "true")
    host = docker_client.api.inspect_container(container_of(fresh_shell))["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges:true" in host["SecurityOpt"]
    assert host["PidsLimit"] == 32  # from the spec's extra["sandbox"]
    assert host["Memory"] == 64 * 2**20  # from spec.resource_requirements.min_memory_gb
    assert host["NanoCpus"] == 10**9


def test_shutdown_removes_the_container(busybox_image: str, docker_client: Any) -> None:
    tool = TightShell()
    run(tool, "true")
    container_id = container_of(tool)
    assert container_id is not None and _exists(docker_client, container_id)
    asyncio.run(tool.shutdown())
    assert not _exists(docker_client, container_id)
    asyncio.run(tool.shutdown())  # a second shutdown is harmless


_OWNER_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, time
    sys.path.insert(0, {repo!r})
    from tests.colony.sandbox.conftest import TightShell, container_of
    tool = TightShell()
    asyncio.run(tool.invoke("run", {{"script": "true"}}))
    print(container_of(tool), flush=True)
    asyncio.run(tool.invoke("run", {{"script": "sleep 30"}}))
    """
)


def _start_owner() -> tuple[subprocess.Popen[str], str]:
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER_SCRIPT.format(repo=str(REPO))],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert owner.stdout is not None
    container_id = owner.stdout.readline().strip()
    assert container_id, "the owner process did not start a sandbox"
    return owner, container_id


def _stop(owner: subprocess.Popen[str], signal_number: int) -> None:
    owner.send_signal(signal_number)
    owner.wait(timeout=20)
    assert owner.stdout is not None
    owner.stdout.close()


def test_orphans_of_a_killed_owner_are_reaped(fresh_shell: TightShell, docker_client: Any) -> None:
    owner, orphan = _start_owner()
    _stop(owner, signal.SIGKILL)  # no chance to clean up
    assert _exists(docker_client, orphan)  # left behind, running
    run(fresh_shell, "true")  # the next sandbox start reaps it
    assert not _exists(docker_client, orphan)


def test_an_orphan_that_will_not_go_does_not_stop_a_sandbox_start(
    fresh_shell: TightShell,
    docker_client: Any,
    busybox_image: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The engine refusing a real orphan's removal (simulated: a 500 for it) is logged, and the start goes on."""
    own_host(monkeypatch)
    (orphan,) = orphans(docker_client, busybox_image, 1)
    remove_container = APIClient.remove_container
    busy = "driver failed to remove root filesystem: device or resource busy"

    def refusing(api: APIClient, container: str, **kwargs: Any) -> Any:
        if container == orphan:
            raise engine_error(500, busy)
        return remove_container(api, container, **kwargs)

    monkeypatch.setattr(APIClient, "remove_container", refusing)
    monkeypatch.setattr(ownership, "REMOVAL_PATIENCE", 0.5)  # the reaper's retries, shortened
    try:
        with caplog.at_level(logging.WARNING, logger=pool.__name__):
            assert run(fresh_shell, "echo started")["stdout"] == "started\n"
        assert "orphaned sandbox containers left in place" in caplog.text and busy in caplog.text
        assert _exists(docker_client, orphan)
    finally:
        remove_container(docker_client.api, orphan, force=True, v=True)


def test_ctrl_c_removes_the_container(busybox_image: str, docker_client: Any) -> None:
    owner, container_id = _start_owner()
    _stop(owner, signal.SIGINT)
    assert not _exists(docker_client, container_id)


@pytest.mark.parametrize("script", ["exit 7", "echo oops >&2; false"])
def test_non_zero_exit_is_a_result(fresh_shell: TightShell, script: str) -> None:
    result = run(fresh_shell, script)
    assert result["exit_code"] in (7, 1)
    assert not result["timed_out"]
