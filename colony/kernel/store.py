"""The kernel's one database: engine set-up, the two kinds of transaction, and opening the schema.

SQLite (the default, a WAL file under COLONY_HOME) serialises writers with ``BEGIN
IMMEDIATE`` so a read-modify-write never interleaves with another process's;
PostgreSQL relies on row locks (``SELECT ... FOR UPDATE``) and conditional updates.
Database errors are translated into :class:`~colony.errors.KernelStoreError` here, once.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, Engine, create_engine, event, insert, select, text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool, StaticPool
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

from colony.errors import KernelStoreError
from colony.kernel.migrations import migrate
from colony.kernel.schema import AUDIT_GENESIS, SCHEMA_VERSION, metadata, tables

__all__ = ["SCHEMA_VERSION", "Prepared", "Store", "tables"]

T = TypeVar("T")


def _arranger(compiled: SQLCompiler) -> Callable[[dict[str, Any]], Any]:
    """How to turn named parameters into what the driver's paramstyle expects."""
    if not compiled.positional:
        return lambda values: values
    order = tuple(compiled.positiontup or ())
    if len(order) < 2:
        return lambda values: tuple(values[name] for name in order)
    pick = itemgetter(*order)
    return lambda values: pick(values)


class Prepared:
    """A Core statement compiled once per dialect and run straight on the DBAPI cursor.

    The kernel's hot path (every proposal) runs a handful of fixed statements; skipping
    SQLAlchemy's per-call compile-cache lookup and result wrapping halves their cost. Rows
    come back as plain dicts. Driver errors are translated by :meth:`Store.run` like any other.
    """

    def __init__(self, statement: ClauseElement) -> None:
        self.statement = statement
        self._compiled: dict[str, tuple[str, Callable[[dict[str, Any]], Any], dict[str, Any]]] = {}

    def _sql(self, dialect: Dialect) -> tuple[str, Callable[[dict[str, Any]], Any], dict[str, Any]]:
        found = self._compiled.get(dialect.name)
        if found is None:
            compiled = cast(SQLCompiler, self.statement.compile(dialect=dialect))
            literals = {name: bind.value for name, bind in compiled.binds.items() if not bind.required}
            found = self._compiled[dialect.name] = (compiled.string, _arranger(compiled), literals)
        return found

    def execute(self, connection: Connection, parameters: dict[str, Any]) -> Any:
        """Run with ``parameters`` (by bind name) and return the DBAPI cursor."""
        sql, arrange, literals = self._sql(connection.dialect)
        cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(sql, arrange({**literals, **parameters} if literals else parameters))
        return cursor

    def all(self, connection: Connection, parameters: dict[str, Any]) -> list[dict[str, Any]]:
        """Every row, as dicts."""
        cursor = self.execute(connection, parameters)
        rows = cursor.fetchall()
        names = [column[0] for column in cursor.description]
        cursor.close()
        return [dict(zip(names, row, strict=True)) for row in rows]

    def rowcount(self, connection: Connection, parameters: dict[str, Any]) -> int:
        """Run a DML statement; how many rows it touched."""
        cursor = self.execute(connection, parameters)
        count: int = cursor.rowcount
        cursor.close()
        return count


_RETRYABLE_PG_CODES = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
_ATTEMPTS = 8


def _is_retryable(error: BaseException | None) -> bool:
    code = getattr(error, "sqlstate", None)
    if code in _RETRYABLE_PG_CODES:
        return True
    return "database is locked" in str(error) or "database table is locked" in str(error)


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
            return create_engine(url, poolclass=NullPool)
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
    def _transaction(self, *, write: bool) -> Iterator[Connection]:
        """A transaction; on SQLite a writer takes the write lock up front (``BEGIN IMMEDIATE``)."""
        connection = self._connection()
        with connection.begin():
            if self.is_sqlite:
                dbapi_connection = connection.connection.dbapi_connection
                dbapi_connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")  # type: ignore[union-attr]
            yield connection

    def run(self, work: Callable[[Connection], T], *, write: bool = True) -> T:
        """Run ``work`` in one transaction, retrying on lock timeouts and deadlocks.

        ``work`` may run more than once, so it must only touch the database.
        """
        delay = 0.005
        driver_error = self.engine.dialect.loaded_dbapi.Error
        for attempt in range(_ATTEMPTS):
            try:
                with self._transaction(write=write) as connection:
                    return work(connection)
            except (DBAPIError, driver_error) as error:
                cause = error.orig if isinstance(error, DBAPIError) else error
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
