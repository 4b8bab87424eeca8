"""Real Prefect for the tests: the test harness's API, and a real ``prefect server``.

``prefect_harness`` runs Prefect's own ``prefect_test_harness`` (a temporary API server on
SQLite) once per session. ``prefect_server`` starts ``prefect server start`` on a free
port in a temporary PREFECT_HOME, once per session, for end-to-end tests of deployments;
``running_prefect_server`` starts one on a given database (PostgreSQL for the at-scale test).
A server on SQLite starts from a copy of a database already migrated (``migrated_database``):
migrating an empty one is about half of a fresh server's start.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import httpx
import prefect
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


PREFECT = Path(sys.executable).parent / "prefect"


def migrated_database(path: Path) -> None:
    """Put an empty Prefect database, migrated to this Prefect's head, at ``path`` (SQLite).

    The migrated database is built once per machine and Prefect version, by ``prefect server
    database upgrade`` (the migrations a server would run), and copied for each server.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_migrated_template(), path)


@cache
def _migrated_template() -> Path:
    folder = Path(tempfile.gettempdir()) / "colony-tests-prefect-db"
    folder.mkdir(exist_ok=True)
    template = folder / f"prefect-{prefect.__version__}.db"
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder among the test workers; the others wait, then copy
        if not template.exists():
            building = folder / f"building-{os.getpid()}.db"
            env = {
                **os.environ,
                "PREFECT_HOME": str(folder / "home"),
                "PREFECT_SERVER_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{building}",
            }
            env.pop("PREFECT_API_URL", None)
            upgrade = [str(PREFECT), "server", "database", "upgrade", "--yes"]
            done = subprocess.run(upgrade, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"prefect server database upgrade failed:\n{done.stdout}{done.stderr}"
            with closing(sqlite3.connect(building)) as database:  # everything in the one file, no WAL beside it
                database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                database.execute("PRAGMA journal_mode=DELETE")
            os.replace(building, template)
    return template


@contextmanager
def running_prefect_server(home: Path, database_url: str | None = None) -> Iterator[PrefectServer]:
    """``prefect server start`` on a free loopback port with its state in ``database_url`` (default: SQLite in home)."""
    port = free_port()
    if not PREFECT.exists():
        unavailable(f"no prefect command next to {sys.executable}")
    if database_url is None and not (home / "prefect.db").exists():  # a server started again keeps its state
        migrated_database(home / "prefect.db")
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
        [str(PREFECT), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
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
