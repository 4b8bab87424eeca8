"""Bring an older kernel database up to the current schema, in the transaction that opens it.

Each step adds what its version introduced (columns with their defaults, indexes) and
fills it in from what the older schema knew. New tables are created by the schema's own
``create_all`` before the steps run.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Connection, Table, func, insert, inspect, select, text

from colony.kernel.schema import AUDIT_GENESIS, tables

__all__ = ["migrate"]

# Version 1 did not record when an authorization lapses; it lapsed after the default TTL.
_V1_TTL_SECONDS = 3600.0


def _add_column(connection: Connection, table: Table, column: Column[Any]) -> None:
    kind = column.type.compile(dialect=connection.dialect)
    default = column.server_default.arg if column.server_default is not None else None  # type: ignore[attr-defined]
    suffix = f" NOT NULL DEFAULT '{default}'" if default is not None and not column.nullable else ""
    connection.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}{suffix}"))


def _to_2(connection: Connection) -> None:
    """Proposal counters by state, reservation expiry, expiry in history and ledger, tick keys."""
    agents, proposals, consequences = tables.agents, tables.proposals, tables.consequences
    budget = tables.budget_periods
    for table, names in (
        (agents, ("rejected_proposals", "held_proposals", "unreported_rejections")),
        (proposals, ("expires_at", "reservation")),
        (budget, ("llm_calls_expired", "runtime_seconds_expired")),
        (consequences, ("kind",)),
    ):
        for name in names:
            _add_column(connection, table, table.c[name])
    # Counters: an outcome without a proposal used to count as accepted; keep accepted <= total.
    connection.execute(
        text(
            "UPDATE colony_agents SET accepted_proposals = CASE WHEN accepted_proposals > total_proposals "
            "THEN total_proposals ELSE accepted_proposals END"
        )
    )
    connection.execute(text("UPDATE colony_agents SET rejected_proposals = total_proposals - accepted_proposals"))
    # Reservations: consumed ones are settled; the others lapse with their authorization, as now.
    connection.execute(
        text(
            "UPDATE colony_proposals SET reservation = CASE WHEN consumed_at IS NULL THEN 'open' ELSE 'settled' END, "
            f"expires_at = created_at + {_V1_TTL_SECONDS} WHERE decision = 'execute' AND period IS NOT NULL"
        )
    )
    for index in proposals.indexes:
        if index.name and index.name.startswith("ix_colony_proposals_open"):
            index.create(connection, checkfirst=True)


def _to_3(connection: Connection) -> None:
    """Approval requests: a new table, made by ``create_all``; nothing older to fill in."""


def _to_4(connection: Connection) -> None:
    """The audit log: new tables, made by ``create_all``; its head starts empty, at the genesis hash."""
    if connection.execute(select(tables.audit_head.c.id)).first() is None:
        connection.execute(insert(tables.audit_head).values(id=1, seq=0, hash=AUDIT_GENESIS))


def _to_5(connection: Connection) -> None:
    """The audit head keeps the hash its last append replaced: the last entry's prev_hash."""
    head, log = tables.audit_head, tables.audit_log
    if "prev_hash" not in {column["name"] for column in inspect(connection).get_columns(head.name)}:
        _add_column(connection, head, head.c.prev_hash)  # else create_all made the table, after version 4
    last = select(log.c.prev_hash).where(log.c.seq == head.c.seq).scalar_subquery()
    connection.execute(head.update().values(prev_hash=func.coalesce(last, AUDIT_GENESIS)))


def _to_6(connection: Connection) -> None:
    """Who reported each outcome, what each agent holds, overspend, and what a reviewer sees and is called.

    Older outcomes were the caller's word: they stay ``agent`` reports. An agent's holdings are summed
    from its open reservations.
    """
    agents, proposals = tables.agents, tables.proposals
    for table, names in (
        (agents, ("held_llm_calls", "held_runtime_seconds")),
        (tables.budget_periods, ("llm_calls_overspent", "runtime_seconds_overspent")),
        (tables.consequences, ("reported_by",)),
        (tables.approvals, ("arguments", "reviewer_display_name")),
    ):
        present = {column["name"] for column in inspect(connection).get_columns(table.name)}
        for name in names:
            if name not in present:  # else create_all made the table, after version 5
                _add_column(connection, table, table.c[name])
    open_of_agent = (proposals.c.agent_id == agents.c.agent_id) & (proposals.c.reservation == "open")
    held = {
        "held_llm_calls": proposals.c.reserved_llm_calls,
        "held_runtime_seconds": proposals.c.reserved_runtime_seconds,
    }
    connection.execute(
        agents.update().values(
            {
                name: select(func.coalesce(func.sum(column), 0.0)).where(open_of_agent).scalar_subquery()
                for name, column in held.items()
            }
        )
    )


_STEPS = {1: _to_2, 2: _to_3, 3: _to_4, 4: _to_5, 5: _to_6}


def migrate(connection: Connection, found: int, target: int) -> None:
    """Run every step from version ``found`` to ``target`` inside the caller's transaction."""
    for version in range(found, target):
        _STEPS[version](connection)
