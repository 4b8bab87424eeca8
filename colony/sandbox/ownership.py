"""Who owns a sandbox container, and reaping the ones whose owner has died.

Every container is labelled with its owner's host, pid and process start time.
A process killed without a chance to clean up (SIGKILL, a power cut) leaves its
containers running; the next sandbox start on the same host removes every
container whose owner no longer exists. The start time guards against a
recycled pid making a dead owner look alive.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from docker import errors as docker_errors

__all__ = ["OWNER_HOST", "OWNER_PID", "OWNER_STARTED", "ROLE", "SANDBOX", "owner_labels", "reap_orphans"]

SANDBOX = "org.colony.sandbox"
ROLE = "org.colony.sandbox.role"
OWNER_HOST = "org.colony.sandbox.owner-host"
OWNER_PID = "org.colony.sandbox.owner-pid"
OWNER_STARTED = "org.colony.sandbox.owner-started"


def _process_started(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' where /proc cannot tell)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # Field 22; the command name (field 2) may hold spaces, so count from its closing parenthesis.
    return stat.rsplit(")", 1)[1].split()[19]


def owner_labels(role: str) -> dict[str, str]:
    """The labels marking a container as this process's sandbox for ``role``."""
    pid = os.getpid()
    return {
        SANDBOX: "1",
        ROLE: role,
        OWNER_HOST: socket.gethostname(),
        OWNER_PID: str(pid),
        OWNER_STARTED: _process_started(pid),
    }


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that labelled a container on this host still runs."""
    try:
        pid = int(labels.get(OWNER_PID, ""))
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's live process
    started = labels.get(OWNER_STARTED, "")
    return not started or _process_started(pid) in ("", started)


def reap_orphans(client: Any) -> list[str]:
    """Remove this host's sandbox containers whose owner is dead; the ids this call removed.

    Several processes may reap the same orphan at once. Every way another one can win
    (the container is gone, its removal is already under way, it is exiting) leaves the
    orphan taken care of, so none of them is an error here.
    """
    host = socket.gethostname()
    listed = client.containers.list(all=True, filters={"label": [SANDBOX, f"{OWNER_HOST}={host}"]}, ignore_removed=True)
    removed = []
    for container in listed:
        if owner_alive(container.labels):
            continue
        try:
            container.remove(force=True, v=True)
        except docker_errors.APIError as error:
            if not _reaped_elsewhere(client, container.id, error):
                raise
            continue
        removed.append(container.id)
    return removed


def _reaped_elsewhere(client: Any, container_id: str, error: docker_errors.APIError) -> bool:
    """Whether a failed removal failed only because another process is removing (or removed) the container."""
    if isinstance(error, docker_errors.NotFound) or error.status_code == 409:
        return True
    try:
        state = client.api.inspect_container(container_id)["State"]
    except docker_errors.NotFound:
        return True
    return bool(state.get("Dead")) or state.get("Status") in ("removing", "dead", "exited")
