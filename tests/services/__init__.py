"""Fixtures that start the real services the tests talk to.

A test that needs a service calls ``unavailable(reason)`` when the service
cannot exist on this machine: it skips, unless ``COLONY_REQUIRE_SERVICES=1``
(set by ``.ci/run``), where a missing service fails the run instead.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import NoReturn

import pytest


def services_required() -> bool:
    """Whether a missing service must fail the run rather than skip."""
    return os.environ.get("COLONY_REQUIRE_SERVICES") == "1"


def unavailable(reason: str) -> NoReturn:
    """Skip (or, in CI, fail) because a service the test needs is not there."""
    if services_required():
        pytest.fail(f"required service unavailable: {reason}", pytrace=False)
    pytest.skip(reason)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie awaiting its parent counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def free_port() -> int:
    """A TCP port on loopback nobody is listening on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
