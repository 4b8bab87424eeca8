"""Pipelined transactions on PostgreSQL: results read on demand, one commit, errors as psycopg's, no thread stalled."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import Connection, bindparam, insert, select, text, update

from colony.errors import KernelStoreError
from colony.kernel.prepared import Prepared
from colony.kernel.store import GuardFailed, Store, tables

_AGENTS = tables.agents
_ADD = Prepared(
    insert(_AGENTS).values(
        agent_id=bindparam("agent"),
        trust=bindparam("trust"),
        role="sandbox",
        total_proposals=0,
        accepted_proposals=0,
        rejected_proposals=0,
        held_proposals=0,
        unreported_rejections=0,
        last_updated=0.0,
    )
)
_TRUST = Prepared(select(_AGENTS.c.agent_id, _AGENTS.c.trust).where(_AGENTS.c.agent_id == bindparam("agent")))
_LOCK = Prepared(select(_AGENTS.c.trust).where(_AGENTS.c.agent_id == bindparam("agent")).with_for_update())
_RAISE = Prepared(update(_AGENTS).where(_AGENTS.c.agent_id == bindparam("agent")).values(trust=_AGENTS.c.trust + 0.1))
_GUARD = Prepared(
    select(text("1 / count(*)")).select_from(
        update(_AGENTS)
        .where(_AGENTS.c.agent_id == bindparam("agent"))
        .where(_AGENTS.c.trust < bindparam("below"))
        .values(trust=_AGENTS.c.trust + 0.1)
        .returning(_AGENTS.c.agent_id)
        .cte("raised")
    )
)


@pytest.fixture
def store(postgres_url: str) -> Iterator[Store]:
    instance = Store(postgres_url)
    yield instance
    instance.dispose()


def trust_of(store: Store, agent: str) -> float | None:
    rows = store.run(lambda connection: _TRUST.all(connection, {"agent": agent}), write=False)
    return rows[0]["trust"] if rows else None


def test_sent_statements_run_in_order_and_commit_together(store: Store) -> None:
    def work(connection: Connection) -> list[dict[str, object]]:
        _ADD.send(connection, {"agent": "a", "trust": 0.5})
        raised = _RAISE.send(connection, {"agent": "a"})
        rows = _TRUST.all(connection, {"agent": "a"})  # reads what was sent before it
        assert raised.count() == 1
        _RAISE.send(connection, {"agent": "a"})
        return rows

    assert store.run(work, pipelined=True) == [{"agent_id": "a", "trust": 0.6}]
    assert trust_of(store, "a") == pytest.approx(0.7)


def test_a_failed_statement_undoes_the_transaction_and_is_raised_as_psycopgs_error(store: Store) -> None:
    store.run(lambda connection: _ADD.send(connection, {"agent": "taken", "trust": 0.1}), pipelined=True)

    def work(connection: Connection) -> None:
        _ADD.send(connection, {"agent": "b", "trust": 0.5})
        _ADD.send(connection, {"agent": "taken", "trust": 0.5})  # a duplicate key
        _RAISE.send(connection, {"agent": "b"})

    with pytest.raises(KernelStoreError, match="duplicate key") as caught:
        store.run(work, pipelined=True)
    assert isinstance(caught.value.__cause__, psycopg.errors.UniqueViolation)
    assert trust_of(store, "b") is None
    # the connection is usable again, and a statement first prepared after the failure is prepared again
    fresh = Prepared(select(_AGENTS.c.agent_id).where(_AGENTS.c.trust > bindparam("above")))

    def after(connection: Connection) -> list[dict[str, object]]:
        _ADD.send(connection, {"agent": "c", "trust": 0.9})
        return fresh.all(connection, {"above": 0.5})

    assert store.run(after, pipelined=True) == [{"agent_id": "c"}]


def test_a_statement_prepared_in_a_failed_batch_is_prepared_again(store: Store) -> None:
    late = Prepared(select(_AGENTS.c.agent_id).where(_AGENTS.c.agent_id == bindparam("agent")))
    store.run(lambda connection: _ADD.send(connection, {"agent": "taken", "trust": 0.1}), pipelined=True)

    def failing(connection: Connection) -> None:
        _ADD.send(connection, {"agent": "taken", "trust": 0.5})
        late.send(connection, {"agent": "taken"})  # its PREPARE is skipped: the batch already failed

    with pytest.raises(KernelStoreError):
        store.run(failing, pipelined=True)
    assert store.run(lambda connection: late.all(connection, {"agent": "taken"}), pipelined=True) == [
        {"agent_id": "taken"}
    ]


def test_an_exception_in_the_body_commits_nothing(store: Store) -> None:
    def work(connection: Connection) -> None:
        _ADD.send(connection, {"agent": "d", "trust": 0.5})
        _TRUST.all(connection, {"agent": "d"})  # sent and read: the insert ran on the server
        raise ValueError("the caller changed its mind")

    with pytest.raises(ValueError, match="changed its mind"):
        store.run(work, pipelined=True)
    assert trust_of(store, "d") is None


def test_a_failed_guard_undoes_everything_sent_with_it(store: Store) -> None:
    store.run(lambda connection: _ADD.send(connection, {"agent": "e", "trust": 0.5}), pipelined=True)

    def work(connection: Connection) -> None:
        _ADD.send(connection, {"agent": "f", "trust": 0.5})
        _GUARD.send(connection, {"agent": "e", "below": 0.2})  # 0.5 is not below 0.2

    with pytest.raises(GuardFailed):
        store.run(work, pipelined=True)
    assert (trust_of(store, "e"), trust_of(store, "f")) == (0.5, None)
    store.run(lambda connection: _GUARD.send(connection, {"agent": "e", "below": 0.9}), pipelined=True)
    assert trust_of(store, "e") == pytest.approx(0.6)


def test_sqlalchemy_statements_are_refused_inside_a_pipeline(store: Store) -> None:
    with pytest.raises(RuntimeError, match="use Prepared"):
        store.run(lambda connection: connection.execute(select(_AGENTS.c.agent_id)).all(), pipelined=True)


def test_other_threads_run_while_a_pipelined_transaction_waits_for_a_lock(store: Store, postgres_url: str) -> None:
    store.run(lambda connection: _ADD.send(connection, {"agent": "g", "trust": 0.5}), pipelined=True)
    # Another process holds the row for a second: a thread waiting on it must not hold the GIL meanwhile.
    hold = (
        "import sys, time, psycopg\n"
        "with psycopg.connect(sys.argv[1]) as c:\n"
        "    c.execute(\"SELECT 1 FROM colony_agents WHERE agent_id = 'g' FOR UPDATE\")\n"
        "    print('held', flush=True)\n"
        "    time.sleep(1.0)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, postgres_url.replace("+psycopg", "")], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    waiter = threading.Thread(target=lambda: store.run(lambda c: _LOCK.all(c, {"agent": "g"}), pipelined=True))
    started = time.monotonic()
    waiter.start()
    longest, last = 0.0, time.monotonic()
    while waiter.is_alive():
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    holder.communicate(timeout=30)
    assert time.monotonic() - started > 0.5  # the waiter did wait for the row
    assert longest < 0.25  # and this thread kept running all along


def test_a_connection_lost_mid_transaction_is_an_error_and_the_next_call_reconnects(
    store: Store, postgres_url: str
) -> None:
    store.run(lambda connection: _ADD.send(connection, {"agent": "h", "trust": 0.5}), pipelined=True)

    def work(connection: Connection) -> None:
        pid = Prepared(select(text("pg_backend_pid()"))).all(connection, {})[0]["pg_backend_pid"]
        with psycopg.connect(postgres_url.replace("+psycopg", ""), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        _RAISE.send(connection, {"agent": "h"})

    with pytest.raises(KernelStoreError):
        store.run(work, pipelined=True)
    store.run(lambda connection: _RAISE.send(connection, {"agent": "h"}), pipelined=True)
    assert trust_of(store, "h") == pytest.approx(0.6)
