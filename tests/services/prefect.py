"""Real Prefect for the tests: the test harness's API, and a real ``prefect server``.

``prefect_harness`` runs Prefect's own ``prefect_test_harness`` (a temporary API server on
SQLite) once per session. ``prefect_server`` starts ``prefect server start`` on a free
port in a temporary PREFECT_HOME, once per session, for end-to-end tests of deployments;
``running_prefect_server`` starts one on a given database (PostgreSQL for the at-scale test).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prefect.events.worker import EventsWorker
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_LOCAL_STORAGE_PATH,
    PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL,
    PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL,
    temporary_settings,
)

from tests.services import free_port, unavailable

SERVER_STARTUP_SECONDS = 90

#: A test server's loops, each every second instead of every five: events are stored (and
#: readable), task run states recorded and proactive automations (the zombie one) evaluated.
FAST_SERVER_LOOPS = {
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL": "1",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL": "1",
    "PREFECT_SERVER_EVENTS_PROACTIVE_GRANULARITY": "PT1S",
}
#: What talks to a test server polls it every second instead of every ten: a runner
#: (``serve``) and a worker pick up a run, a run's logs reach the API.
FAST_CLIENT_LOOPS = {
    "PREFECT_RUNNER_POLL_FREQUENCY": "1",
    "PREFECT_WORKER_QUERY_SECONDS": "1",
    "PREFECT_LOGGING_TO_API_BATCH_INTERVAL": "0.5",
}


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Prefect's test harness for the session, results in a temporary directory; its API URL."""
    # Imported here: it loads Prefect's whole server (about 4 s), which a run without this fixture never needs.
    from prefect.testing.utilities import prefect_test_harness

    storage = tmp_path_factory.mktemp("prefect-storage")
    fast = {
        PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL: 1.0,
        PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL: 1.0,
    }
    with (
        temporary_settings({PREFECT_LOCAL_STORAGE_PATH: storage, **fast}),
        prefect_test_harness(server_startup_timeout=60),
    ):
        yield str(PREFECT_API_URL.value())


@contextmanager
def prefect_api(api_url: str) -> Iterator[None]:
    """This process's Prefect client on ``api_url`` for the block, then on the session's API again.

    Prefect keeps one events worker per process for every self-hosted API, bound to the URL
    current when it started: drained on the way in and out, events sent in the block reach
    ``api_url`` and later ones the session's API, not a server that has since stopped.
    """
    EventsWorker.drain_all(timeout=10, at_exit=False)
    with temporary_settings({PREFECT_API_URL: api_url}):
        try:
            yield
        finally:
            EventsWorker.drain_all(timeout=10, at_exit=False)


@dataclass(frozen=True)
class PrefectServer:
    """A running ``prefect server``: where its API is, and the environment to reach it."""

    api_url: str
    home: Path

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for subprocesses that talk to this server (polling it every second)."""
        return {
            **os.environ,
            **FAST_CLIENT_LOOPS,
            "PREFECT_API_URL": self.api_url,
            "PREFECT_HOME": str(self.home),
            **extra,
        }


@contextmanager
def running_prefect_server(home: Path, database_url: str | None = None) -> Iterator[PrefectServer]:
    """``prefect server start`` on a free loopback port with its state in ``database_url`` (default: SQLite in home)."""
    port = free_port()
    prefect = Path(sys.executable).parent / "prefect"
    if not prefect.exists():
        unavailable(f"no prefect command next to {sys.executable}")
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_DATABASE_CONNECTION_URL": database_url or f"sqlite+aiosqlite:///{home / 'prefect.db'}",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
        **FAST_SERVER_LOOPS,
    }
    env.pop("PREFECT_API_URL", None)
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    api_url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + SERVER_STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                unavailable(f"prefect server exited with {process.returncode}; see {home / 'server.log'}")
            try:
                if httpx.get(f"{api_url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                unavailable(f"prefect server did not answer within {SERVER_STARTUP_SECONDS} s")
            time.sleep(0.5)
        yield PrefectServer(api_url=api_url, home=home)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="session")
def prefect_server_factory() -> Callable[..., AbstractContextManager[PrefectServer]]:
    """``running_prefect_server``, for a test that needs a server of its own (on its own database)."""
    return running_prefect_server


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """``prefect server start`` on SQLite, on a free loopback port, stopped at the end of the session."""
    with running_prefect_server(tmp_path_factory.mktemp("prefect-server-home")) as server:
        yield server
