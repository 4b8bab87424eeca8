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
import requests

from colony.sandbox.ownership import OWNER_PID, owner_labels, reap_orphans

REAPERS = 6
ORPHANS = 8


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def engine_error(status: int, explanation: str) -> docker.errors.APIError:
    """What the Docker SDK raises when the engine answers ``status`` (for a simulated engine)."""
    response = requests.Response()
    response.status_code, response.url = status, "http+docker://localhost/containers"
    return docker.errors.APIError(explanation, response, explanation=explanation)


def own_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process takes a host name of its own: reapers elsewhere (tests beside it) leave its orphans alone."""
    host = f"reaping-test-{uuid.uuid4()}"
    monkeypatch.setattr(socket, "gethostname", lambda: host)


def orphans(docker_client: Any, image: str, count: int) -> list[str]:
    """Containers labelled as owned by a process on this host that has exited."""
    labels = owner_labels("busybox") | {OWNER_PID: str(dead_pid())}
    ids = []
    for _ in range(count):
        container = docker_client.containers.create(image, ["sleep", "300"], labels=labels)
        container.start()
        ids.append(container.id)
    return ids


def test_concurrent_reapers_of_the_same_orphans_all_succeed(
    docker_client: Any, busybox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    own_host(monkeypatch)
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
    removed = [container_id for result in results for container_id in result]
    # Every orphan is reported by a reaper whose removal the engine accepted (it may accept two
    # concurrent forced removals of one container, so an orphan can be reported twice).
    assert set(removed) == set(ids)
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
    """
    own_host(monkeypatch)
    (container_id,) = orphans(docker_client, busybox_image, 1)
    remove_container = docker_client.api.remove_container
    answers: list[str] = []

    def rival_in_the_way(container: str, **kwargs: Any) -> Any:
        if not answers:
            answers.append("409")
            raise engine_error(409, "removal of container is already in progress")
        answers.append("removed")
        return remove_container(container, **kwargs)

    monkeypatch.setattr(docker_client.api, "remove_container", rival_in_the_way)
    assert reap_orphans(docker_client) == [container_id]
    assert answers == ["409", "removed"]
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(container_id)
