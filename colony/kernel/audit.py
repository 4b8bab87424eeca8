"""The audit log: every decision the kernel makes, one hash-chained entry each, appended in its transaction.

An entry is ``seq`` (1, 2, 3, ... without gaps), ``at``, ``event``, ``who`` (the
principal's agent id), ``on_behalf`` (the agent the decision is about), ``what``,
``verdict``, ``detail`` (a JSON object) and ``prev_hash``; its ``hash`` is the sha256
of all of those as canonical JSON. The head row (the last seq and hash) is locked by
every append, last of all the rows a transaction touches (after the budget row), so
concurrent writers on SQLite and PostgreSQL build one linear chain, and a decision and
its entry commit or roll back together.

:meth:`AuditLog.verify` walks the chain: a changed entry fails its own hash, an
inserted or removed one breaks the seq or the link to its neighbour, and a cut tail
shows against the head row, or (when the head row was rewritten too) against a head
hash the operator kept from an earlier ``verify`` or export.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import Field
from sqlalchemy import Connection, Text, bindparam, cast, func, insert, literal_column, select, update

from colony.kernel.models import KernelModel
from colony.kernel.prepared import Prepared
from colony.kernel.schema import AUDIT_GENESIS
from colony.kernel.store import tables

__all__ = ["AuditCheck", "AuditEntry", "AuditLog", "AuditRecord", "entry_hash"]

_L, _H = tables.audit_log, tables.audit_head
_FIELDS = ("seq", "at", "event", "who", "on_behalf", "what", "verdict", "detail")
BATCH = 1000


@dataclass(frozen=True)
class AuditRecord:
    """One decision to append: an entry without its seq, time and hashes."""

    event: str
    who: str
    on_behalf: str
    what: str
    verdict: str
    detail: dict[str, Any] = field(default_factory=dict)


class AuditEntry(KernelModel):
    """One entry of the audit log, as exported (one JSON line each)."""

    seq: int = Field(description="Position in the log: 1, 2, 3, ... without gaps.")
    at: str = Field(description="When, ISO 8601 in UTC.")
    at_unix: float = Field(description="When, as Unix time (the value hashed).")
    event: str = Field(description="propose, approve, reject, claim, expire or refused.")
    who: str = Field(description="The principal's agent id ('anonymous' before authentication, 'colony' itself).")
    on_behalf: str = Field(description="The agent the decision is about.")
    what: str = Field(description="The action and what it acts on, or the approval, or the refused route.")
    verdict: str = Field(description="execute / hold / refuse, approved / rejected / claimed / expired, or refused.")
    detail: dict[str, Any] = Field(description="The rest: scores, reasons, ids, the refusal's status and count.")
    prev_hash: str = Field(description="The previous entry's hash (64 zeros for the first).")
    hash: str = Field(description="sha256 of this entry's fields and prev_hash as canonical JSON.")


class AuditCheck(KernelModel):
    """What ``verify`` found."""

    ok: bool = Field(description="Whether every entry, link and the head hold.")
    count: int = Field(description="Entries read.")
    head_seq: int = Field(description="The last entry's seq (0 for an empty log).")
    head_hash: str = Field(description="The last entry's hash: keep it outside the database to check truncation.")
    problem: str | None = Field(default=None, description="The first thing that does not hold.")
    seq: int | None = Field(default=None, description="The entry the problem names.")


# Canonical JSON sorts the keys, and "prev_hash" and "seq" sit next to each other: an entry's text is
# what comes before prev_hash's value, that value, '","seq":', the seq, and what comes after it. The
# text around the two is known before the head is locked, so PostgreSQL can chain an entry in SQL.
_BEFORE = tuple(name for name in sorted(_FIELDS) if name < "prev_hash")
_AFTER = tuple(name for name in sorted(_FIELDS) if name > "seq")
_LINK = '","seq":'


def _canonical(content: dict[str, Any]) -> str:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _around(row: dict[str, Any]) -> tuple[str, str]:
    """The entry's canonical text before its prev_hash value, and after its seq."""
    before = _canonical({name: row[name] for name in _BEFORE})
    after = _canonical({name: row[name] for name in _AFTER})
    return before[:-1] + ',"prev_hash":"', "," + after[1:]


def entry_hash(row: dict[str, Any], prev_hash: str) -> str:
    """sha256 of the entry's fields (``detail`` as the JSON text stored) and ``prev_hash``, as canonical JSON.

    Canonical JSON here is ``json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.
    """
    before, after = _around(row)
    return hashlib.sha256(f"{before}{prev_hash}{_LINK}{row['seq']}{after}".encode()).hexdigest()


def _detail(detail: dict[str, Any]) -> str:
    return json.dumps(detail, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def to_entry(row: dict[str, Any]) -> AuditEntry:
    """A stored row as exported."""
    at = datetime.fromtimestamp(row["at"], UTC).isoformat()
    return AuditEntry(
        seq=row["seq"],
        at=at,
        at_unix=row["at"],
        event=row["event"],
        who=row["who"],
        on_behalf=row["on_behalf"],
        what=row["what"],
        verdict=row["verdict"],
        detail=json.loads(row["detail"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )


_ONE = _H.c.id == literal_column("1")
_ADVANCE = Prepared(update(_H).where(_ONE).values(seq=_H.c.seq + bindparam("count")).returning(_H.c.seq, _H.c.hash))
_INSERT = Prepared(insert(_L))
_SET_HEAD = Prepared(update(_H).where(_ONE).values(hash=bindparam("head"), prev_hash=bindparam("prev")))
_HEAD = Prepared(select(_H.c.seq, _H.c.hash).where(_ONE))
_MOVE_HEAD = Prepared(
    update(_H)
    .where(_ONE)
    .where(_H.c.seq == bindparam("was"))
    .values(seq=bindparam("seq"), hash=bindparam("head"), prev_hash=bindparam("prev"))
)


def _chained() -> Any:
    """PostgreSQL: one entry appended in one statement, its hash computed by the server (``sha256``).

    The head is advanced, and the entry inserted with the head's old hash as its link and the
    new one as its own, so no client holds the head's lock across a round trip.
    """
    text = (
        bindparam("before", type_=Text)
        + _H.c.hash
        + bindparam("link", value=_LINK, type_=Text)
        + cast(_H.c.seq + 1, Text)
        + bindparam("after", type_=Text)
    )
    digest = func.encode(func.sha256(func.convert_to(text, literal_column("'UTF8'"))), literal_column("'hex'"))
    head = (
        update(_H)
        .where(_ONE)
        .values(seq=_H.c.seq + 1, prev_hash=_H.c.hash, hash=digest)
        .returning(_H.c.seq, _H.c.prev_hash, _H.c.hash)
        .cte("head")
    )
    given = ("at", "event", "who", "on_behalf", "what", "verdict", "detail")
    values = [bindparam(name, type_=_L.c[name].type) for name in given]
    return insert(_L).from_select(
        ["seq", *given, "prev_hash", "hash"], select(head.c.seq, *values, head.c.prev_hash, head.c.hash)
    )


_APPEND_CHAINED = Prepared(_chained())


def _row(record: AuditRecord, now: float) -> dict[str, Any]:
    return {
        "at": now,
        "event": record.event,
        "who": record.who,
        "on_behalf": record.on_behalf,
        "what": record.what[:1024],
        "verdict": record.verdict,
        "detail": _detail(record.detail),
    }


class AuditLog:
    """Append to, read and verify the audit log; every method works inside a caller's transaction."""

    @staticmethod
    def append(
        connection: Connection, records: Sequence[AuditRecord], now: float, *, head: tuple[int, str] | None = None
    ) -> int:
        """Append ``records`` in order; lock the head last of all (call this at the end of the transaction).

        On PostgreSQL each entry is one statement, sent without waiting (it goes out with the
        commit in a pipelined transaction); elsewhere the head is advanced, then the entries
        written. ``head`` is the head's seq and hash when this SQLite transaction read them
        under its write lock already: the head is then written once, where it still is (a
        head that moved undoes the transaction). Returns how many were appended.
        """
        if not records:
            return 0
        if connection.dialect.name == "postgresql":
            for record in records:
                row = _row(record, now)
                before, after = _around(row)
                _APPEND_CHAINED.send(connection, row | {"before": before, "after": after})
            return len(records)
        if head is None:
            [advanced] = _ADVANCE.all(
                connection, {"count": len(records)}
            )  # takes the head's lock: one writer at a time
            seq, prev = advanced["seq"] - len(records), advanced["hash"]
        else:
            seq, prev = head
        was, link = seq, prev
        for record in records:
            seq += 1
            row = _row(record, now) | {"seq": seq, "prev_hash": prev}
            row["hash"] = entry_hash(row, prev)
            link, prev = prev, row["hash"]
            _INSERT.send(connection, row)
        if head is None:
            _SET_HEAD.send(connection, {"head": prev, "prev": link})
        elif _MOVE_HEAD.rowcount(connection, {"seq": seq, "head": prev, "prev": link, "was": was}) != 1:
            raise RuntimeError("the audit head moved inside a transaction that holds the write lock")
        return len(records)

    @staticmethod
    def page(connection: Connection, after_seq: int, since_at: float | None = None) -> list[dict[str, Any]]:
        """Up to ``BATCH`` entries in seq order after ``after_seq`` (and at or after ``since_at``)."""
        query = select(_L).where(_L.c.seq > after_seq).order_by(_L.c.seq).limit(BATCH)
        if since_at is not None:
            query = query.where(_L.c.at >= since_at)
        return [dict(row._mapping) for row in connection.execute(query)]

    @classmethod
    def rows(cls, connection: Connection) -> Iterator[dict[str, Any]]:
        """Every entry in seq order, read a page at a time."""
        after = 0
        while batch := cls.page(connection, after):
            yield from batch
            after = batch[-1]["seq"]

    @staticmethod
    def head(connection: Connection) -> tuple[int, str]:
        """The head row: the last seq and hash."""
        [row] = _HEAD.all(connection, {})
        return row["seq"], row["hash"]

    @classmethod
    def verify(cls, connection: Connection, kept_head: str | None = None) -> AuditCheck:
        """Check every entry's hash, every link and seq, the head row, and ``kept_head`` when given."""
        expected, prev, count = 1, AUDIT_GENESIS, 0
        kept_found = kept_head is None or kept_head == AUDIT_GENESIS

        def failed(problem: str, seq: int | None) -> AuditCheck:
            return AuditCheck(ok=False, count=count, head_seq=expected - 1, head_hash=prev, problem=problem, seq=seq)

        for row in cls.rows(connection):
            count += 1
            seq = row["seq"]
            if seq != expected:
                return failed(
                    f"entry {expected} is missing: the log goes from entry {expected - 1} to entry {seq} "
                    "(an entry was removed)",
                    expected,
                )
            if row["prev_hash"] != prev:
                return failed(
                    f"entry {seq} does not follow entry {seq - 1}: its prev_hash is not that entry's hash "
                    f"(entry {seq - 1} was changed, or an entry was inserted or removed before entry {seq})",
                    seq,
                )
            if entry_hash(row, row["prev_hash"]) != row["hash"]:
                return failed(f"entry {seq} was changed: its hash does not match its content{_moved(row)}", seq)
            prev, expected = row["hash"], seq + 1
            kept_found = kept_found or prev == kept_head
        last = expected - 1
        head_seq, head_hash = cls.head(connection)
        if head_seq > last:
            return failed(
                f"entries {last + 1} to {head_seq} are missing: the log ends at entry {last}, its head is at "
                f"{head_seq} (the tail was removed)",
                last + 1,
            )
        if head_seq < last:
            return failed(
                f"entry {head_seq + 1} was inserted: the head is at entry {head_seq}, the log goes on to {last}",
                head_seq + 1,
            )
        if head_hash != prev:
            return failed(f"the head's hash is not entry {last}'s: the head or the last entry was rewritten", last)
        if not kept_found:
            return failed(
                f"the kept head {kept_head} is not in the log: the entries up to it were changed or the tail "
                "after it was removed (with the head row)",
                None,
            )
        return AuditCheck(ok=True, count=count, head_seq=last, head_hash=prev)


def _moved(row: dict[str, Any]) -> str:
    """Whether the entry's content is whole but its seq moved (an entry was inserted or removed before it)."""
    for seq in (row["seq"] - 1, row["seq"] + 1):
        if entry_hash(row | {"seq": seq}, row["prev_hash"]) == row["hash"]:
            return f" (it was entry {seq}: entries were renumbered after an insert or removal)"
    return ""
