"""Processes that reap the same orphaned sandbox containers at once all succeed, whoever wins each removal."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import docker
import pytest

from colony.sandbox.ownership import OWNER_HOST, OWNER_PID, owner_labels, reap_orphans

REAPERS = 6
ORPHANS = 8


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def orphans(docker_client: Any, image: str, count: int, host: str | None = None) -> list[str]:
    """Containers labelled as owned by a process that has exited (on ``host``: this one unless named)."""
    labels = owner_labels("busybox") | {OWNER_PID: str(dead_pid())}
    if host is not None:
        labels[OWNER_HOST] = host
    ids = []
    for _ in range(count):
        container = docker_client.containers.create(image, ["sleep", "300"], labels=labels)
        container.start()
        ids.append(container.id)
    return ids


def test_concurrent_reapers_of_the_same_orphans_all_succeed(docker_client: Any, busybox_image: str) -> None:
    ids = orphans(docker_client, busybox_image, ORPHANS)
    start = threading.Barrier(REAPERS)
    clients = [docker.from_env() for _ in range(REAPERS)]

    def reap(client: Any) -> list[str]:
        start.wait()
        return reap_orphans(client)

    try:
        with ThreadPoolExecutor(REAPERS) as pool:
            results = list(pool.map(reap, clients))  # re-raises the first reaper's error, if any
    finally:
        for client in clients:
            client.close()
    # Other tests' orphans (tests run in parallel) may be reaped here too; only these are counted.
    removed = [container_id for result in results for container_id in result if container_id in ids]
    assert len(removed) == len(set(removed)), "each orphan is reported removed by one reaper only"
    for container_id in ids:
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(container_id)


def test_a_reaper_that_finds_the_orphan_already_being_removed_succeeds(docker_client: Any, busybox_image: str) -> None:
    """The removal another process started first (a 409 here) counts as this reaper's work done."""
    (container_id,) = orphans(docker_client, busybox_image, 1)
    rival = docker.from_env()
    try:

        def remove() -> None:
            with contextlib.suppress(docker.errors.APIError):  # the reaper may win this race instead
                rival.api.remove_container(container_id, force=True, v=True)

        thread = threading.Thread(target=remove)
        thread.start()
        reap_orphans(docker_client)
        thread.join()
    finally:
        rival.close()
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(container_id)


def test_a_reaper_whose_rival_fails_to_remove_the_orphan_removes_it_itself(
    docker_client: Any, busybox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 409 says a rival's removal is under way, not that it will succeed: the reaper retries until the orphan is gone.

    The rival is simulated: the engine's first answer is a 409, and no one else removes the container.
    The orphan belongs to a host of its own, which only this reaper takes for its own: the sandbox
    pools of tests running beside this one reap this host's orphans and would take it first.
    """
    host = f"reaping-test-{uuid.uuid4()}"
    (container_id,) = orphans(docker_client, busybox_image, 1, host)
    monkeypatch.setattr(socket, "gethostname", lambda: host)
    remove_container = docker_client.api.remove_container
    answers: list[str] = []

    def rival_in_the_way(container: str, **kwargs: Any) -> Any:
        if not answers:
            answers.append("409")
            response = type("Response", (), {"status_code": 409, "reason": "Conflict"})()
            raise docker.errors.APIError("removal of container is already in progress", response=response)
        answers.append("removed")
        return remove_container(container, **kwargs)

    monkeypatch.setattr(docker_client.api, "remove_container", rival_in_the_way)
    assert reap_orphans(docker_client) == [container_id]
    assert answers == ["409", "removed"]
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(container_id)
