"""The store: a WAL SQLite file under COLONY_HOME, a schema version, nothing only in memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text, update

from colony.errors import KernelStoreError
from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.store import SCHEMA_VERSION, Store, tables


def test_default_database_is_a_wal_file_under_colony_home(colony_home: Path) -> None:
    kernel = ColonyKernel.from_env()
    assert (colony_home / "kernel.db").exists()
    with kernel.store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        version = connection.execute(text("SELECT version FROM colony_schema_version")).scalar()
    assert version == SCHEMA_VERSION
    kernel.close()


def test_everything_survives_a_restart(colony_home: Path) -> None:
    first = ColonyKernel.from_env()
    first.record_outcome(
        {"agent_id": "a", "action_type": "patch_file", "target": "m", "actual_outcome": "ok", "tests_passed": True}
    )
    first.close()
    second = ColonyKernel.from_env()
    profile = second.agent_profile("a")
    assert (profile.trust_score, len(profile.consequence_history)) == (0.144, 1)
    assert second.status().pheromone_summary.total_signals == 2
    second.close()


def test_a_newer_schema_is_refused(colony_home: Path) -> None:
    store = Store(f"sqlite:///{colony_home / 'k.db'}")
    store.run(lambda c: c.execute(update(tables.schema_version).values(version=SCHEMA_VERSION + 1)))
    store.dispose()
    with pytest.raises(KernelStoreError, match="newer"):
        Store(f"sqlite:///{colony_home / 'k.db'}")


def test_database_errors_become_kernel_store_errors(colony_home: Path) -> None:
    store = Store("sqlite://")
    with pytest.raises(KernelStoreError, match="kernel database error") as caught:
        store.run(lambda c: c.execute(text("SELECT * FROM no_such_table")))
    assert caught.value.retryable is False


def test_in_memory_sqlite_works(colony_home: Path) -> None:
    kernel = ColonyKernel(KernelSettings(database_url="sqlite://"))
    assert (
        kernel.propose_action(
            {"agent_id": "a", "action_type": "read_file", "target": "m", "rationale": "look", "rollback_plan": ""}
        ).decision.value
        == "execute"
    )
    kernel.close()
