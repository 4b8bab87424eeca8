"""The kernel's prepared statements: each Core statement compiled once per dialect and run straight on the driver.

The kernel's hot path (every proposal) runs a handful of fixed statements; skipping
SQLAlchemy's per-call compile-cache lookup and result wrapping halves their cost. A
statement runs in a transaction :class:`~colony.kernel.store.Store` opened: at once, or
queued in the transaction's pipeline on PostgreSQL (``pipeline.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

if TYPE_CHECKING:
    from colony.kernel.pipeline import Pipeline

__all__ = ["PIPELINE", "PREPARED", "Pending", "Prepared"]

PIPELINE = "colony.pipeline"  # Connection.info key of the pipeline a transaction runs in
PREPARED = "colony.prepared"  # Connection.info key of the statement names prepared on the connection


def _arranger(compiled: SQLCompiler) -> Callable[[dict[str, Any]], Any]:
    """How to turn named parameters into what the driver's paramstyle expects."""
    if not compiled.positional:
        return lambda values: values
    order = tuple(compiled.positiontup or ())
    if len(order) < 2:
        return lambda values: tuple(values[name] for name in order)
    pick = itemgetter(*order)
    return lambda values: pick(values)


# A statement as a dialect runs it: its SQL (bytes for PostgreSQL), how to order its parameters, its
# literal values, and the DBAPI cursor class to run it on (None: the connection's own).
_Compiled = tuple[str | bytes, Callable[[dict[str, Any]], Any], dict[str, Any], Any]
_names = itertools.count(1)


class Pending:
    """A statement sent in a transaction; its rows and row count are read when first asked for.

    In a pipelined transaction that first read is a round trip (it sends everything queued
    before it too); otherwise the statement has already run.
    """

    __slots__ = ("_cursor", "_pipeline", "_slot", "_statement")

    def __init__(self, statement: Prepared, cursor: Any = None, pipeline: Pipeline | None = None, slot: Any = None):
        self._statement = statement
        self._cursor = cursor
        self._pipeline = pipeline
        self._slot = slot

    def rows(self) -> list[dict[str, Any]]:
        """Every row, as dicts."""
        statement = self._statement
        if self._pipeline is not None:
            result = self._pipeline.result(self._slot)
            names = statement.names or statement.remember_names(self._pipeline.names(result))
            rows = self._pipeline.rows(result)
        else:
            rows = self._cursor.fetchall()
            names = tuple(column[0] for column in self._cursor.description)
            self._cursor.close()
        return [dict(zip(names, row, strict=True)) for row in rows]

    def count(self) -> int:
        """How many rows a DML statement touched."""
        if self._pipeline is not None:
            return self._pipeline.result(self._slot).command_tuples or 0
        count: int = self._cursor.rowcount
        self._cursor.close()
        return count


class Prepared:
    """A Core statement compiled once per dialect and run straight on the driver.

    The kernel's hot path (every proposal) runs a handful of fixed statements; skipping
    SQLAlchemy's per-call compile-cache lookup and result wrapping halves their cost. On
    PostgreSQL the statement is compiled with ``$1`` placeholders, what the server itself
    takes: a pipelined transaction prepares it once per connection (see ``pipeline.py``),
    and otherwise it runs on a psycopg ``RawCursor``, which sends the text as it is. Rows
    come back as plain dicts. Driver errors are translated by :meth:`Store.run` like any other.
    """

    def __init__(self, statement: ClauseElement | Callable[[Dialect], ClauseElement]) -> None:
        """``statement``, or a function building it for a dialect (an ``INSERT ... ON CONFLICT`` is one per dialect)."""
        self.statement = statement
        self.name = f"colony_{next(_names)}".encode()  # its prepared statement's name on a pipelined connection
        self.names: tuple[str, ...] = ()  # its result's column names, once a pipeline read them
        self._compiled: dict[str, _Compiled] = {}

    def remember_names(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """Keep the result's column names: they are the same for every run of the statement."""
        self.names = names
        return names

    def _sql(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            statement = self.statement if isinstance(self.statement, ClauseElement) else self.statement(dialect)
            cursor_class = None
            if dialect.name == "postgresql":
                from psycopg import RawCursor  # only where PostgreSQL is used: psycopg is slow to import

                dialect, cursor_class = _dollar_dialect(dialect), RawCursor
            compiled = cast(SQLCompiler, statement.compile(dialect=dialect))
            literals = {name: bind.value for name, bind in compiled.binds.items() if not bind.required}
            sql = compiled.string.encode() if cursor_class else compiled.string
            found = self._compiled[dialect.name] = (sql, _arranger(compiled), literals, cursor_class)
        return found

    def send(self, connection: Connection, parameters: dict[str, Any]) -> Pending:
        """Run with ``parameters`` (by bind name); in a pipelined transaction, queued without waiting.

        An error it raises then surfaces at the next read or at the commit: only send what the
        transaction may fail on as a whole.
        """
        sql, arrange, literals, cursor_class = self._sql(connection.dialect)
        values = arrange({**literals, **parameters} if literals else parameters)
        pipeline: Pipeline | None = connection.info.get(PIPELINE)
        if pipeline is not None:
            return Pending(self, pipeline=pipeline, slot=pipeline.send(self.name, cast(bytes, sql), values))
        dbapi_connection: Any = connection.connection.dbapi_connection
        cursor = cursor_class(dbapi_connection) if cursor_class else dbapi_connection.cursor()
        cursor.execute(sql, values)
        return Pending(self, cursor=cursor)

    def all(self, connection: Connection, parameters: dict[str, Any]) -> list[dict[str, Any]]:
        """Every row, as dicts."""
        return self.send(connection, parameters).rows()

    def rowcount(self, connection: Connection, parameters: dict[str, Any]) -> int:
        """Run a DML statement; how many rows it touched."""
        return self.send(connection, parameters).count()


@cache
def _dollar_dialect(dialect: Dialect) -> Dialect:
    """``dialect`` with ``$1`` placeholders: what PostgreSQL itself takes, so psycopg sends the text as it is."""
    return type(dialect)(paramstyle="numeric_dollar")  # type: ignore[call-arg]
