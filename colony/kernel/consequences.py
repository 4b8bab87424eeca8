"""Consequence memory: every outcome report (and every reservation that expired without one), in arrival order."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, bindparam, insert, select

from colony.kernel.models import ConsequenceRecord
from colony.kernel.prepared import Prepared
from colony.kernel.store import tables

__all__ = ["HISTORY_LIMIT", "ConsequenceMemory"]

HISTORY_LIMIT = 200
_C = tables.consequences
_STORE = Prepared(insert(_C).values({column: bindparam(f"v_{column.name}") for column in _C.c if column.name != "seq"}))


def _record(row: Row[Any]) -> ConsequenceRecord:
    fields = dict(row._mapping)
    fields.pop("seq", None)
    return ConsequenceRecord(**fields)


class ConsequenceMemory:
    """Store and read consequences; every method works inside a caller's transaction."""

    @staticmethod
    def store(connection: Connection, record: ConsequenceRecord) -> None:
        """Append one history entry."""
        _STORE.send(connection, {f"v_{name}": value for name, value in record.model_dump(mode="json").items()})

    @staticmethod
    def history(connection: Connection, agent_id: str) -> list[str]:
        """The agent's last 200 consequence ids, oldest first."""
        rows = connection.execute(
            select(_C.c.consequence_id).where(_C.c.agent_id == agent_id).order_by(_C.c.seq.desc()).limit(HISTORY_LIMIT)
        ).all()
        return [row.consequence_id for row in reversed(rows)]

    @staticmethod
    def recent(connection: Connection, limit: int = 10) -> list[ConsequenceRecord]:
        """The last ``limit`` consequences, newest first."""
        rows = connection.execute(select(_C).order_by(_C.c.seq.desc()).limit(limit)).all()
        return [_record(row) for row in rows]

    @staticmethod
    def get(connection: Connection, consequence_id: str) -> ConsequenceRecord | None:
        """One consequence by its id."""
        row = connection.execute(select(_C).where(_C.c.consequence_id == consequence_id)).first()
        return None if row is None else _record(row)

    @staticmethod
    def for_proposal(connection: Connection, proposal_id: str) -> ConsequenceRecord | None:
        """The entry that settled ``proposal_id`` (at most one: the column is unique), or None."""
        row = connection.execute(select(_C).where(_C.c.proposal_id == proposal_id)).first()
        return None if row is None else _record(row)

    @staticmethod
    def all_for(connection: Connection, agent_id: str) -> list[ConsequenceRecord]:
        """Every consequence of one agent, oldest first (for audits and consistency checks)."""
        rows = connection.execute(select(_C).where(_C.c.agent_id == agent_id).order_by(_C.c.seq)).all()
        return [_record(row) for row in rows]
