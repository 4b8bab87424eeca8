"""Idempotent ticks: a scheduled run's key advances the colony once, however often the run is retried.

A keyed tick first claims its key (``INSERT ... ON CONFLICT DO NOTHING`` on the key's
primary key) in the transaction that advances the tick, so two processes, or a crashed
run and its retry, cannot both advance for one key: the second finds the key taken and
only reads the status. Keys are kept for 30 days, far longer than any retry waits.
"""

from __future__ import annotations

from sqlalchemy import Connection, delete, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from colony.kernel.schema import tables

__all__ = ["KEY_RETENTION_SECONDS", "TickKeys"]

KEY_RETENTION_SECONDS = 30 * 86400.0
_T = tables.ticks


class TickKeys:
    """Claim and record the keys of applied ticks; every method works inside a caller's transaction."""

    @staticmethod
    def claim(connection: Connection, key: str, now: float) -> bool:
        """Claim ``key`` for this transaction's tick; False when a tick with that key was already applied."""
        connection.execute(delete(_T).where(_T.c.applied_at < now - KEY_RETENTION_SECONDS))
        upsert = sqlite_insert if connection.dialect.name == "sqlite" else pg_insert
        claimed = connection.execute(
            upsert(_T)
            .values(tick_key=key, tick_count=0, applied_at=now)
            .on_conflict_do_nothing()
            .returning(_T.c.tick_key)
        ).first()
        return claimed is not None

    @staticmethod
    def applied(connection: Connection, key: str, tick: int) -> None:
        """Note the tick ``key`` advanced the colony to."""
        connection.execute(update(_T).where(_T.c.tick_key == key).values(tick_count=tick))
