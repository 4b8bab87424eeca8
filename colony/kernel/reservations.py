"""Reservations in flight: an EXECUTE verdict's budget hold, settled by its outcome or expired with its authorization.

A proposal row's ``reservation`` is ``open`` from its EXECUTE verdict until one of:

- **settled**: an outcome report consumed it, attested (its authorization) or matched
  (an unattested report by the same agent for the same action type and target takes the
  oldest such open reservation whose authorization is still valid);
- **expired**: its lease ran out first (the reservation lease plus the work's expected
  time, never past the authorization's TTL; the authorization lapses with it).
  :meth:`Reservations.expire_due` releases the held budget, counts the amount as expired in its period, moves the
  proposal from held to rejected and writes an ``expiry`` entry in the agent's history.
  The tick runs it, and so does any proposal or status that finds a lapsed reservation.

Each change is one conditional ``UPDATE ... WHERE reservation = 'open'``, so a
reservation is settled or expired once, whichever process gets there first.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Float, bindparam, literal_column, select, update

from colony.kernel.consequences import ConsequenceMemory
from colony.kernel.ledger import BUDGET_DIMENSIONS, ResourceLedger
from colony.kernel.models import ConsequenceKind, ConsequenceRecord, Reporter
from colony.kernel.prepared import Prepared
from colony.kernel.roles import RoleAdapter
from colony.kernel.shares import AgentShares
from colony.kernel.store import tables

__all__ = ["EARLIEST_EXPIRY", "EXPIRED", "OPEN", "SETTLED", "SETTLING", "Lease", "Reservations", "held_by"]

_P = tables.proposals
OPEN, SETTLED, EXPIRED = "open", "settled", "expired"
# Literals, not parameters, so the planner uses the partial indexes on open reservations.
_IS_OPEN = _P.c.reservation == literal_column(f"'{OPEN}'")
EARLIEST_EXPIRY = select(_P.c.expires_at).where(_IS_OPEN).order_by(_P.c.expires_at).limit(1).scalar_subquery()
_EXPIRE = Prepared(
    update(_P)
    .where(_IS_OPEN)
    .where(_P.c.expires_at <= bindparam("now"))
    .values(reservation=literal_column(f"'{EXPIRED}'"))
    .returning(*_P.c)
)
_MATCH = Prepared(
    select(_P.c.proposal_id)
    .where(_IS_OPEN)
    .where(_P.c.agent_id == bindparam("agent"))
    .where(_P.c.action_type == bindparam("action"))
    .where(_P.c.target == bindparam("target"))
    .where(_P.c.expires_at > bindparam("now"))
    .order_by(_P.c.created_at)
    .limit(1)
    .with_for_update(skip_locked=True)
)
# What settling a reservation needs of its proposal: which it was, its period and what it held.
SETTLING = (_P.c.proposal_id, _P.c.agent_id, _P.c.period, *(_P.c[f"reserved_{name}"] for name in BUDGET_DIMENSIONS))
_TAKE = Prepared(
    update(_P)
    .where(_P.c.proposal_id == bindparam("proposal"))
    .where(_IS_OPEN)
    .values(reservation=literal_column(f"'{SETTLED}'"), consumed_at=bindparam("now"))
    .returning(*SETTLING)
)

# Growing a reservation: its proposal read and locked, then its hold and lease set (per ledger dimension).
_GROWING = {
    name: Prepared(
        select(_P.c.period, _P.c[f"reserved_{name}"].label("held"), _P.c.agent_id, _P.c.created_at, _P.c.expires_at)
        .where(_P.c.proposal_id == bindparam("proposal"))
        .where(_IS_OPEN)
        .with_for_update()
    )
    for name in BUDGET_DIMENSIONS
}
_GROWN = {
    name: Prepared(
        update(_P)
        .where(_P.c.proposal_id == bindparam("proposal"))
        .values(
            {
                _P.c.expires_at: bindparam("until", type_=Float),
                _P.c[f"reserved_{name}"]: _P.c[f"reserved_{name}"] + bindparam("extra", type_=Float),
            }
        )
    )
    for name in BUDGET_DIMENSIONS
}


def held_by(row: dict[str, Any]) -> dict[str, float]:
    """What a proposal row reserved, by ledger dimension."""
    return {name: float(row[f"reserved_{name}"]) for name in BUDGET_DIMENSIONS}


@dataclass(frozen=True, slots=True)
class Lease:
    """How long a growing reservation stays open: ``until``, never past ``ttl_seconds`` after its verdict."""

    until: float
    ttl_seconds: float


class Reservations:
    """Settle and expire reservations; every method works inside a caller's transaction."""

    def __init__(self, ledger: ResourceLedger, roles: RoleAdapter, shares: AgentShares) -> None:
        self.ledger = ledger
        self.roles = roles
        self.shares = shares

    @staticmethod
    def earliest_expiry(connection: Connection) -> float | None:
        """When the first open reservation lapses (None when none is open)."""
        return connection.execute(select(EARLIEST_EXPIRY)).scalar()

    @staticmethod
    def match(
        connection: Connection, agent_id: str, action_type: str, target: str, now: float
    ) -> dict[str, Any] | None:
        """Take the agent's oldest valid open reservation for ``action_type`` at ``target``; its row, or None."""
        keys = {"agent": agent_id, "action": action_type, "target": target, "now": now}
        for _ in range(3):  # another process may take the candidate between the two statements
            found = _MATCH.all(connection, keys)
            if not found:
                return None
            taken = _TAKE.all(connection, {"proposal": found[0]["proposal_id"], "now": now})
            if taken:
                return taken[0]
        return None

    def grant(
        self,
        estimate: Mapping[str, float],
        name: str,
        up_to: float,
        budget: Mapping[str, float] | None,
        held: float,
    ) -> dict[str, float]:
        """``estimate`` with ``name`` grown toward ``up_to``, as far as the period's budget and the agent's share leave.

        ``budget`` (the period's row, None before it has one) and ``held`` (what the agent's open
        reservations hold) must be read in the transaction that reserves, under its write lock
        (SQLite's ``BEGIN IMMEDIATE``): the reservation's own conditional update then holds what
        :meth:`grow` would add after it, without reading the rows again. The estimate must still fit.
        """
        wanted = up_to - estimate[name]
        if wanted <= 0:
            return dict(estimate)
        ceiling = budget[f"{name}_max"] if budget is not None else None
        if budget is None or ceiling is None:
            headroom = self.ledger.limits[name]
        else:
            headroom = ceiling - budget[f"{name}_used"] - budget[f"{name}_reserved"]
        extra = max(0.0, min(wanted, headroom - estimate[name], self.shares.caps[name] - held - estimate[name]))
        return {**estimate, name: estimate[name] + extra}

    def grow(self, connection: Connection, proposal_id: str, name: str, up_to: float, lease: Lease) -> float | None:
        """Let an open reservation hold up to ``up_to`` of ``name`` and stay open until ``lease.until``; what it holds.

        It grows as far as the budget and its agent's share allow. None when the proposal holds no
        open reservation. Locks the proposal, then its agent's row, then its period's row: the
        kernel's one order.
        """
        found = _GROWING[name].all(connection, {"proposal": proposal_id})
        if not found or found[0]["period"] is None:
            return None
        row = found[0]
        period, holding, agent_id = int(row["period"]), float(row["held"]), str(row["agent_id"])
        until = max(float(row["expires_at"]), min(lease.until, float(row["created_at"]) + lease.ttl_seconds))
        room = self.shares.room(connection, agent_id, name, up_to - holding)
        extra = self.ledger.grow(connection, period, name, room)
        _GROWN[name].send(connection, {"proposal": proposal_id, "until": until, "extra": extra})
        if extra > 0:
            self.shares.add(connection, agent_id, {name: extra})
        return holding + extra

    def expire_due(self, connection: Connection, now: float) -> int:
        """Expire every open reservation whose authorization has lapsed by ``now``; how many expired.

        Locks rows in the kernel's one order: proposals, agents (by id), budget periods (ascending).
        """
        lapsed = _EXPIRE.all(connection, {"now": now})
        if not lapsed:
            return 0
        by_period: dict[int, dict[str, float]] = defaultdict(lambda: dict.fromkeys(BUDGET_DIMENSIONS, 0.0))
        by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in lapsed:
            for name, amount in held_by(row).items():
                by_period[row["period"]][name] += amount
            by_agent[row["agent_id"]].append(row)
        for agent_id in sorted(by_agent):
            rows = sorted(by_agent[agent_id], key=lambda row: (row["expires_at"], row["proposal_id"]))
            profile = self.roles.expire(connection, agent_id, len(rows), now)
            freed = dict.fromkeys(BUDGET_DIMENSIONS, 0.0)
            for row in rows:
                for name, amount in held_by(row).items():
                    freed[name] += amount
            self.shares.free(connection, agent_id, freed)
            for row in rows:
                ConsequenceMemory.store(connection, _expiry_record(row, profile.trust, now))
        for period in sorted(by_period):
            self.ledger.release(connection, period, by_period[period])
        return len(lapsed)


def _expiry_record(row: dict[str, Any], trust: float, now: float) -> ConsequenceRecord:
    held = ", ".join(f"{name} {amount:g}" for name, amount in held_by(row).items())
    return ConsequenceRecord(
        consequence_id=str(uuid.uuid4()),
        proposal_id=row["proposal_id"],
        agent_id=row["agent_id"],
        action_type=row["action_type"],
        target=row["target"],
        actual_outcome=(
            f"no outcome was recorded before the authorization expired at {row['expires_at']:.0f}; "
            f"its reservation ({held}) was released"
        ),
        tests_passed=False,
        human_feedback=0.0,
        trust_before=trust,
        trust_after=trust,
        recorded_at=now,
        kind=ConsequenceKind.EXPIRY,
        reported_by=Reporter.RUNTIME,
    )
