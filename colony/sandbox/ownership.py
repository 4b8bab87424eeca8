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
import time
from pathlib import Path
from typing import Any

from docker import errors as docker_errors

__all__ = ["OWNER_HOST", "OWNER_PID", "OWNER_STARTED", "ROLE", "SANDBOX", "owner_labels", "reap_orphans"]

SANDBOX = "org.colony.sandbox"
ROLE = "org.colony.sandbox.role"
OWNER_HOST = "org.colony.sandbox.owner-host"
OWNER_PID = "org.colony.sandbox.owner-pid"
OWNER_STARTED = "org.colony.sandbox.owner-started"

REMOVAL_PATIENCE = 10.0  # seconds a reaper keeps retrying one orphan's removal
RETRY_PAUSE = 0.05


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

    Several processes may reap the same orphan at once. When this returns, each orphan it
    listed is gone, or another process is still in the middle of removing it.
    """
    host = socket.gethostname()
    listed = client.containers.list(all=True, filters={"label": [SANDBOX, f"{OWNER_HOST}={host}"]}, ignore_removed=True)
    orphaned = [container.id for container in listed if not owner_alive(container.labels)]
    return [container_id for container_id in orphaned if _remove_orphan(client, container_id)]


def _remove_orphan(client: Any, container_id: str) -> bool:
    """Remove one orphan: True if the engine accepted this call's removal, False if another's.

    The engine may accept two concurrent forced removals of one container, so two reapers can
    both answer True for it.

    Another process's removal (a 409 here) can still fail: under load a forced kill can time
    out and leave the container exited or dead, with nobody removing it. So a failed removal
    is retried until the container is gone, not taken as done elsewhere.
    """
    deadline = time.monotonic() + REMOVAL_PATIENCE
    while True:
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except docker_errors.NotFound:
            return False
        except docker_errors.APIError as error:
            if time.monotonic() >= deadline:
                if error.status_code == 409:
                    return False  # still being removed elsewhere, and that removal has not failed
                raise
            time.sleep(RETRY_PAUSE)
        else:
            return True
