"""A kernel transaction on PostgreSQL's pipeline protocol, through psycopg's libpq wrapper.

A proposal is about a dozen short statements. Sent one at a time, each waits for the
server and the transaction holds its row locks across every wait; psycopg's own pipeline
mode removes the waits but still costs some 35 µs of client CPU per statement (it talks
to the socket after each one), which at eight processes on two cores is most of the
budget. Here statements are queued in libpq's buffer (``psycopg.pq``, the wrapper psycopg
documents for features its cursors do not expose) and go out together: when a result is
first read (:meth:`Pipeline.result`) and at the ``COMMIT``, which travels with the last
statements. Parameters and rows are converted by psycopg's own ``Transformer``, in text
format, so the server reads each parameter as the type its statement gives it. Each
statement is prepared once per connection, under its own name.

Waiting for the server happens in ``select``, never inside libpq, so other threads run
meanwhile.
"""

from __future__ import annotations

import select
from collections import deque
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer

__all__ = ["Pipeline", "Slot"]

_OK = {pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK}
_TEXT: dict[int, tuple[PyFormat, ...]] = {}  # every parameter in text format, by count


class Slot:
    """Where a sent statement's result lands once it is read."""

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result: pq.abc.PGresult | None = None


class _Prepare(Slot):
    """The result of preparing a statement: the name exists on the server once it is in."""

    __slots__ = ("name",)

    def __init__(self, name: bytes) -> None:
        super().__init__()
        self.name = name


class Pipeline:
    """One transaction's statements on libpq's pipeline: ``begin``, ``send``..., then ``commit`` or ``abandon``.

    Args:
        connection: The psycopg connection (idle, not in pipeline mode).
        prepared: The statement names already prepared on this connection; kept up to date.
    """

    def __init__(self, connection: Any, prepared: set[bytes]) -> None:
        self._pgconn = connection.pgconn
        self._transformer = Transformer(connection)
        self._prepared = prepared
        self._unread: deque[Slot] = deque()  # sent, in order, results not read yet
        self._error: psycopg.Error | None = None

    def begin(self) -> None:
        """Enter pipeline mode and queue ``BEGIN``."""
        self._pgconn.enter_pipeline_mode()
        self._queue_command(b"BEGIN")

    def send(self, name: bytes, sql: bytes, parameters: Sequence[Any]) -> Slot:
        """Queue the statement ``sql`` (prepared as ``name`` on first use) with ``parameters``."""
        pgconn = self._pgconn
        if name not in self._prepared:
            pgconn.send_prepare(name, sql)
            self._unread.append(_Prepare(name))
            self._prepared.add(name)  # taken back if the server never got to it
        count = len(parameters)
        formats = _TEXT.get(count) or _TEXT.setdefault(count, (PyFormat.TEXT,) * count)
        pgconn.send_query_prepared(name, self._transformer.dump_sequence(parameters, formats))
        slot = Slot()
        self._unread.append(slot)
        return slot

    def result(self, slot: Slot) -> pq.abc.PGresult:
        """``slot``'s result: everything sent so far goes out, and every result is read back.

        Reading them all, not just up to ``slot``, lets the reads that follow (statements sent
        together, such as the locks an outcome takes) cost no further round trip.
        """
        if slot.result is None:
            self._pgconn.send_flush_request()
            self._send_all()
            while self._unread:
                self._read_one()
        self._raise_error()
        assert slot.result is not None
        return slot.result

    @staticmethod
    def names(result: pq.abc.PGresult) -> tuple[str, ...]:
        """The column names of a result."""
        return tuple((result.fname(index) or b"").decode() for index in range(result.nfields))

    def rows(self, result: pq.abc.PGresult) -> list[tuple[Any, ...]]:
        """A result's rows, converted by psycopg's loaders."""
        self._transformer.set_pgresult(result)
        return self._transformer.load_rows(0, result.ntuples, tuple)

    def commit(self) -> None:
        """Queue ``COMMIT``, send everything, read every result and leave pipeline mode.

        Raises:
            psycopg.Error: the first statement that failed, as the class psycopg has for its
                SQLSTATE (the transaction then stays failed, for the caller to roll back).
        """
        self._queue_command(b"COMMIT")
        self._sync()
        self._raise_error()

    def abandon(self) -> None:
        """Read what is outstanding without committing and leave pipeline mode (the caller rolls back)."""
        self._sync()

    @property
    def left(self) -> bool:
        """Whether the connection is out of pipeline mode again (else it failed mid-way and is unusable)."""
        return self._pgconn.pipeline_status == pq.PipelineStatus.OFF

    def _queue_command(self, command: bytes) -> None:
        self._pgconn.send_query_params(command, None)
        self._unread.append(Slot())

    def _sync(self) -> None:
        self._pgconn.pipeline_sync()
        self._send_all()
        while self._unread:
            self._read_one()
        while self._next_result().status != pq.ExecStatus.PIPELINE_SYNC:
            pass
        self._pgconn.exit_pipeline_mode()

    def _send_all(self) -> None:
        pgconn, fileno = self._pgconn, self._pgconn.socket
        while pgconn.flush():  # the server's answers may fill our socket first: read them meanwhile
            readable, _, _ = select.select([fileno], [fileno], [])
            if readable:
                pgconn.consume_input()

    def _next_result(self) -> pq.abc.PGresult:
        """The next result libpq has, waiting in ``select`` (the GIL released) until it has one."""
        pgconn, fileno = self._pgconn, self._pgconn.socket
        while True:
            while pgconn.is_busy():
                select.select([fileno], [], [])
                pgconn.consume_input()
            result = pgconn.get_result()
            if result is not None:
                return result  # a NULL only ends one statement's results: read on

    def _read_one(self) -> None:
        slot = self._unread.popleft()
        result = self._next_result()
        slot.result = result
        if result.status in _OK:
            return
        if isinstance(slot, _Prepare):
            self._prepared.discard(slot.name)  # the server never made it
        if self._error is None and result.status == pq.ExecStatus.FATAL_ERROR:
            self._error = _error(result)

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error


def _error(result: pq.abc.PGresult) -> psycopg.Error:
    """The psycopg exception for a failed statement: the class psycopg has for its SQLSTATE."""
    message = (result.error_message or b"").decode(errors="replace").strip()
    sqlstate = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
    try:
        return errors.lookup(sqlstate)(message)
    except KeyError:  # a code psycopg has no class for
        return errors.DatabaseError(f"{message} (SQLSTATE {sqlstate or 'unknown'})")
