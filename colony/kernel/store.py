"""The kernel's one database: engine set-up, the two kinds of transaction, and opening the schema.

SQLite (the default, a WAL file under COLONY_HOME) serialises writers with ``BEGIN
IMMEDIATE`` so a read-modify-write never interleaves with another process's;
PostgreSQL relies on row locks (``SELECT ... FOR UPDATE``) and conditional updates.
Database errors are translated into :class:`~colony.errors.KernelStoreError` here, once.

On PostgreSQL the hot operations (a proposal, an outcome) run *pipelined* (``pipeline.py``):
a statement whose result is not needed yet is queued without waiting for it
(``Prepared.send``, ``prepared.py``), and the last ones go out together with the ``COMMIT``.
A transaction then costs the round trips its reads need, not one per statement, and the rows
every process writes (the budget, the audit head) are locked only while the server runs
that last batch, never while a client is away. A statement can refuse the whole batch it
is in: a *guard* (see :data:`GUARD_FAILED`) aborts the transaction, and :meth:`Store.run`
raises :class:`GuardFailed` instead of a database error.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table, create_engine, event, insert, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool, StaticPool

from colony.errors import KernelStoreError
from colony.kernel.migrations import migrate
from colony.kernel.prepared import PIPELINE, PREPARED
from colony.kernel.schema import AUDIT_GENESIS, SCHEMA_VERSION, metadata, tables

__all__ = ["GUARD_FAILED", "SCHEMA_VERSION", "GuardFailed", "Store", "dialect_insert", "tables"]

T = TypeVar("T")


# A guard is a PostgreSQL statement that aborts its own transaction when what it checks does not
# hold: ``SELECT 1 / count(*) FROM <rows it changed>`` divides by zero when it changed none. Plain
# SQL has no RAISE; this needs no stored function, and nothing else the kernel runs can divide.
GUARD_FAILED = "22012"  # division_by_zero


class GuardFailed(Exception):
    """A guard statement found its condition false, and the transaction was undone."""


def dialect_insert(dialect: Dialect) -> Callable[[Table], Any]:
    """The dialect's own ``insert``, the one that knows ``ON CONFLICT``."""
    return sqlite_insert if dialect.name == "sqlite" else pg_insert


_RETRYABLE_PG_CODES = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
_ATTEMPTS = 8


def _is_retryable(error: BaseException | None) -> bool:
    code = getattr(error, "sqlstate", None)
    if code in _RETRYABLE_PG_CODES:
        return True
    return "database is locked" in str(error) or "database table is locked" in str(error)


def _refuse_in_pipeline(connection: Connection, *_: Any) -> None:
    """SQLAlchemy reads a result's shape when the statement runs; in a pipeline it has none yet.

    So a SQLAlchemy ``execute`` inside a pipelined transaction would see no rows and a row
    count of -1. Every statement there goes through :class:`Prepared`; this makes a slip loud.
    """
    if PIPELINE in connection.info:
        raise RuntimeError("a pipelined kernel transaction ran a statement through SQLAlchemy: use Prepared")


class Store:
    """One SQLAlchemy engine over the kernel's database, safe to share across processes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        self.engine = self._create_engine(url)
        self._pid = os.getpid()
        self._local = threading.local()
        try:
            self._ensure_schema()
        except Exception:
            self.dispose()
            raise

    def _create_engine(self, url: str) -> Engine:
        if not self.is_sqlite:
            if url.startswith("postgresql://") or url.startswith("postgres://"):
                url = "postgresql+psycopg://" + url.split("://", 1)[1]
            engine = create_engine(url, poolclass=NullPool)
            event.listen(engine, "before_cursor_execute", _refuse_in_pipeline)
            return engine
        memory = url in ("sqlite://", "sqlite:///:memory:")
        extra: dict[str, Any] = {"poolclass": StaticPool if memory else NullPool}
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False}, **extra)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # the driver leaves BEGIN to _transaction
            cursor = dbapi_connection.cursor()
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine

    def _connection(self) -> Connection:
        """This thread's connection, kept between calls; a forked child never touches its parent's.

        Connections are per thread rather than pooled (NullPool), so any number of worker
        threads can use one kernel; a thread's connection closes when the thread ends.
        """
        pid = os.getpid()
        if pid != self._pid:
            self.engine.dispose(close=False)
            self._pid, self._local = pid, threading.local()
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is None or connection.closed or connection.invalidated:
            connection = self._local.connection = self.engine.connect()
        return connection

    @contextmanager
    def _transaction(self, *, write: bool, pipelined: bool) -> Iterator[Connection]:
        """A transaction; on SQLite a writer takes the write lock up front (``BEGIN IMMEDIATE``)."""
        connection = self._connection()
        dbapi_connection: Any = connection.connection.dbapi_connection
        if pipelined and not self.is_sqlite:
            yield from self._pipelined(connection, dbapi_connection)
            return
        with connection.begin():
            if self.is_sqlite:
                dbapi_connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield connection

    @staticmethod
    def _pipelined(connection: Connection, dbapi_connection: Any) -> Iterator[Connection]:
        """A pipelined transaction: its own ``BEGIN``, and a ``COMMIT`` that goes out with its last statements.

        SQLAlchemy takes no part (nothing in it runs through SQLAlchemy); an error rolls the
        transaction back on the driver's connection.
        """
        from colony.kernel.pipeline import Pipeline  # imports psycopg: only where PostgreSQL is used

        info = connection.info
        pipeline = info[PIPELINE] = Pipeline(dbapi_connection, info.setdefault(PREPARED, set()))
        try:
            pipeline.begin()
            try:
                yield connection
            except BaseException:
                pipeline.abandon()
                raise
            pipeline.commit()
        except BaseException:
            del info[PIPELINE]
            if pipeline.left and not dbapi_connection.broken:
                dbapi_connection.rollback()
            else:  # the connection failed under it (the server went away): open a new one next time
                connection.invalidate()
            raise
        del info[PIPELINE]

    def run(self, work: Callable[[Connection], T], *, write: bool = True, pipelined: bool = False) -> T:
        """Run ``work`` in one transaction, retrying on lock timeouts and deadlocks.

        ``work`` may run more than once, so it must only touch the database. ``pipelined``
        (PostgreSQL; ignored on SQLite) sends each statement without waiting for it: ``work``
        must read a result only through :class:`Pending` and never rely on a SQLAlchemy
        result's ``rowcount``.

        Raises:
            GuardFailed: a guard statement in ``work`` refused the transaction.
            KernelStoreError: any other database error, once retries are spent.
        """
        delay = 0.005
        driver_error = self.engine.dialect.loaded_dbapi.Error
        for attempt in range(_ATTEMPTS):
            try:
                with self._transaction(write=write, pipelined=pipelined) as connection:
                    return work(connection)
            except (DBAPIError, driver_error) as error:
                cause = error.orig if isinstance(error, DBAPIError) else error
                if getattr(cause, "sqlstate", None) == GUARD_FAILED:
                    raise GuardFailed(str(cause)) from None
                if not _is_retryable(cause) or attempt == _ATTEMPTS - 1:
                    raise KernelStoreError(f"kernel database error: {cause}", retryable=_is_retryable(cause)) from error
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except SQLAlchemyError as error:
                raise KernelStoreError(f"kernel database error: {error}") from error
        raise AssertionError("unreachable")  # pragma: no cover

    def _ensure_schema(self) -> None:
        def create(connection: Connection) -> None:
            if not self.is_sqlite:
                connection.execute(text("SELECT pg_advisory_xact_lock(7100420001)"))
            metadata.create_all(connection, checkfirst=True)
            version = tables.schema_version.c.version
            found = connection.execute(select(version)).scalar()
            if found is None:
                connection.execute(insert(tables.schema_version).values(version=SCHEMA_VERSION))
                connection.execute(
                    insert(tables.kernel_state).values(id=1, tick_count=0, trace_count=0, pruning_candidates=0)
                )
                connection.execute(insert(tables.audit_head).values(id=1, seq=0, hash=AUDIT_GENESIS))
            elif found > SCHEMA_VERSION:
                raise KernelStoreError(
                    f"the kernel database has schema version {found}, newer than this Colony ({SCHEMA_VERSION})"
                )
            elif found < SCHEMA_VERSION:
                migrate(connection, found, SCHEMA_VERSION)
                connection.execute(tables.schema_version.update().values(version=SCHEMA_VERSION))

        self.run(create)

    def dispose(self) -> None:
        """Close this thread's connection and the engine's pooled ones."""
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is not None and self._pid == os.getpid():
            connection.close()
        self._local = threading.local()
        self.engine.dispose()
