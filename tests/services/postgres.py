"""A real PostgreSQL cluster for the session, from the machine's initdb/pg_ctl, on loopback.

PostgreSQL refuses to run as root, so when the tests run as root the cluster's directory is
handed to the ``postgres`` user and the binaries run through ``runuser``. Each test that
asks for ``postgres_url`` gets a fresh database in that cluster.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.services import free_port, unavailable


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[4]))
    return Path(found[-1]).parent if found else None


def _as_cluster_owner(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    runner = shutil.which("runuser")
    return [runner, "-u", "postgres", "--", *command] if runner else ["su", "postgres", "-c", " ".join(command)]


def _run(command: list[str]) -> None:
    done = subprocess.run(_as_cluster_owner(command), capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")


class ClusterUnavailable(RuntimeError):
    """PostgreSQL cannot run on this machine (no binaries, no ``postgres`` user, start failed)."""


@contextmanager
def temporary_cluster() -> Iterator[str]:
    """Run a throwaway cluster in a temp dir; yields the server URL without a database name."""
    binaries = _binaries()
    if binaries is None:
        raise ClusterUnavailable(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (run scripts/services.sh)"
        )
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise ClusterUnavailable("running as root and there is no 'postgres' user to run the cluster as") from None
    root = Path(tempfile.mkdtemp(prefix="colony-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if owner is not None:
        for path in (root, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    port = free_port()
    try:
        _run([str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        options = f"-h 127.0.0.1 -p {port} -k {sockets} -c fsync=off -c max_connections=100"
        _run([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"])
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        shutil.rmtree(root, ignore_errors=True)
        raise ClusterUnavailable(f"could not start PostgreSQL: {error}") from None
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_cluster_owner([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


def create_database(server_url: str) -> str:
    """Create a fresh database in the cluster at ``server_url``; returns its URL."""
    import psycopg

    name = f"colony_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server_url.replace('+psycopg', '')}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{server_url}/{name}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A cluster for the whole session; yields the server URL without a database name."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(temporary_cluster())
        except ClusterUnavailable as error:
            unavailable(str(error))
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A URL naming a fresh, empty database in the session's cluster."""
    return create_database(postgres_server)
