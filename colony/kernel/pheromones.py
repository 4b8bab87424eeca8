"""The pheromone field: traces keyed by (location, signal_type) that evaporate tick by tick.

A trace stores its strength at the tick it was last written and its decay multiplier;
its strength now is computed on read (``strength * keep ** ticks_since``), so a tick never
rewrites the field. Each trace also stores the tick at which it falls to ``min_strength``
(indexed), so a tick deletes exactly the traces that expire: its cost grows with them, not
with the size of the field. ``rank_key`` (``ln strength - written_tick * ln keep``) orders
traces of one decay rate by their strength now, so the top ten need no full scan.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, delete, select, update

from colony.kernel.models import ColonySignal, DecayRate, SignalSource, SignalSummary, SignalType
from colony.kernel.prepared import Pending, Prepared
from colony.kernel.store import dialect_insert, tables

__all__ = ["BASE_EVAPORATION", "Deposit", "PheromoneStore", "expiry_tick", "keep_fraction", "strength_at"]

BASE_EVAPORATION = 0.1  # one NORMAL tick keeps 90%: 3.8 -> 3.42 (seed 001)
_P = tables.pheromones
_STATE = tables.kernel_state
_WRITTEN = ("strength", "written_tick", "expires_tick", "rank_key", "decay_rate", "source", "evidence", "updated_at")
_KEY = (_P.c.location == bindparam("location")) & (_P.c.signal_type == bindparam("kind"))
_TICK = Prepared(select(_STATE.c.tick_count).where(_STATE.c.id == 1))
_LOCK_TRACE = Prepared(select(_P.c.strength, _P.c.decay_rate, _P.c.written_tick).where(_KEY).with_for_update())
# An outcome's (one or two) traces at its target and the tick, in one round trip, locked in signal-type order.
_LOCK_PAIR = Prepared(
    select(
        select(_STATE.c.tick_count).where(_STATE.c.id == 1).scalar_subquery().label("tick_count"),
        _P.c.signal_type,
        _P.c.strength,
        _P.c.decay_rate,
        _P.c.written_tick,
    )
    .where(_P.c.location == bindparam("location"))
    .where((_P.c.signal_type == bindparam("first")) | (_P.c.signal_type == bindparam("second")))
    .order_by(_P.c.signal_type)
    .with_for_update()
)
_REINFORCE = Prepared(
    update(_P)
    .where(_KEY)
    .values({_P.c[name]: bindparam(f"new_{name}") for name in _WRITTEN} | {_P.c.deposits: _P.c.deposits + 1})
)

# A new trace, unless another process laid it first (then it returns no row).
_LAY = Prepared(
    lambda dialect: (
        dialect_insert(dialect)(_P)
        .values(
            {"location": bindparam("location"), "signal_type": bindparam("kind"), "deposits": 1}
            | {name: bindparam(f"new_{name}") for name in _WRITTEN}
        )
        .on_conflict_do_nothing()
        .returning(_P.c.location)
    )
)
_COUNT_TRACE = Prepared(update(_STATE).where(_STATE.c.id == 1).values(trace_count=_STATE.c.trace_count + 1))


def keep_fraction(decay_rate: float) -> float:
    """The share of strength a trace keeps per tick at ``decay_rate``."""
    return max(0.0, 1.0 - BASE_EVAPORATION * decay_rate)


def strength_at(strength: float, decay_rate: float, ticks: int) -> float:
    """A trace's strength ``ticks`` after it was written."""
    return strength * keep_fraction(decay_rate) ** max(ticks, 0)


def expiry_tick(strength: float, decay_rate: float, written_tick: int, min_strength: float) -> int:
    """The first tick at which the trace is at or below ``min_strength``."""
    keep = keep_fraction(decay_rate)
    if strength <= min_strength or keep <= 0.0:
        return written_tick + (0 if strength <= min_strength else 1)
    if keep >= 1.0:
        return 2**62
    ticks = max(0, math.ceil(math.log(min_strength / strength) / math.log(keep)))
    while strength_at(strength, decay_rate, ticks) > min_strength:
        ticks += 1
    while ticks > 0 and strength_at(strength, decay_rate, ticks - 1) <= min_strength:
        ticks -= 1
    return written_tick + ticks


def _rank_key(strength: float, decay_rate: float, written_tick: int) -> float:
    keep = keep_fraction(decay_rate)
    return math.log(strength) - written_tick * math.log(keep) if keep > 0 else math.log(strength)


@dataclass(frozen=True)
class Deposit:
    """One trace to lay or reinforce."""

    location: str
    signal_type: SignalType
    amount: float = 1.0
    source: SignalSource = SignalSource.AGENT
    decay_rate: DecayRate = DecayRate.NORMAL
    evidence: dict[str, Any] | None = None


class PheromoneStore:
    """Deposit, sense, summarise and evaporate traces; every method works inside a caller's transaction."""

    def __init__(self, *, min_strength: float, max_strength: float) -> None:
        self.min_strength = min_strength
        self.max_strength = max_strength

    @staticmethod
    def current_tick(connection: Connection) -> int:
        """The tick count now."""
        return int(_TICK.all(connection, {})[0]["tick_count"])

    def _values(self, deposit: Deposit, row: dict[str, Any] | None, tick: int, now: float) -> dict[str, Any]:
        current = 0.0 if row is None else strength_at(row["strength"], row["decay_rate"], tick - row["written_tick"])
        strength = min(self.max_strength, (current if current > self.min_strength else 0.0) + deposit.amount)
        rate = float(deposit.decay_rate.value)
        return {
            "strength": strength,
            "written_tick": tick,
            "expires_tick": expiry_tick(strength, rate, tick, self.min_strength),
            "rank_key": _rank_key(strength, rate, tick),
            "decay_rate": rate,
            "source": deposit.source.value,
            "evidence": json.dumps(deposit.evidence or {}, sort_keys=True, default=str),
            "updated_at": now,
        }

    def deposit(self, connection: Connection, deposit: Deposit, *, now: float, tick: int | None = None) -> float:
        """Lay ``deposit`` (reinforcing what is there) and return the trace's new strength.

        A new trace is inserted with ``ON CONFLICT DO NOTHING``: when another process laid the
        same trace first, this deposit reinforces theirs instead.
        """
        tick = self.current_tick(connection) if tick is None else tick
        key = {"location": deposit.location, "kind": deposit.signal_type.value}
        rows = _LOCK_TRACE.all(connection, key)
        if not rows:
            values = self._values(deposit, None, tick, now)
            if _LAY.all(connection, key | {f"new_{name}": value for name, value in values.items()}):
                _COUNT_TRACE.send(connection, {})
                return float(values["strength"])
            rows = _LOCK_TRACE.all(connection, key)  # another process laid it first: reinforce theirs
        values = self._values(deposit, rows[0], tick, now)
        _REINFORCE.send(connection, key | {f"new_{name}": value for name, value in values.items()})
        return float(values["strength"])

    @staticmethod
    def lock_traces(connection: Connection, deposits: tuple[Deposit, ...]) -> Pending:
        """Lock and read (with the tick) the traces one or two deposits at one location reinforce.

        See :meth:`deposit_traces`.
        """
        first, second = deposits[0], deposits[-1]
        keys = {"location": first.location, "first": first.signal_type.value, "second": second.signal_type.value}
        return _LOCK_PAIR.send(connection, keys)

    def deposit_traces(
        self, connection: Connection, deposits: tuple[Deposit, ...], locked: Pending, *, now: float
    ) -> None:
        """Lay traces of different types at one location (an outcome's), from what :meth:`lock_traces` read.

        A trace not there yet is laid as :meth:`deposit` lays it.
        """
        rows = locked.rows()
        tick = int(rows[0]["tick_count"]) if rows else self.current_tick(connection)
        found = {row["signal_type"]: row for row in rows}
        for deposit in deposits:
            row = found.get(deposit.signal_type.value)
            if row is None:
                self.deposit(connection, deposit, now=now, tick=tick)
                continue
            values = self._values(deposit, row, tick, now)
            key = {"location": deposit.location, "kind": deposit.signal_type.value}
            _REINFORCE.send(connection, key | {f"new_{name}": value for name, value in values.items()})

    def sense(self, connection: Connection, location: str, signal_type: SignalType) -> list[ColonySignal]:
        """The live trace at (location, signal_type), if any, with its strength now."""
        tick = self.current_tick(connection)
        rows = connection.execute(
            select(_P).where((_P.c.location == location) & (_P.c.signal_type == signal_type.value))
        ).all()
        return [self._signal(row, tick) for row in rows if row.expires_tick > tick]

    def _signal(self, row: Any, tick: int) -> ColonySignal:
        return ColonySignal(
            location=row.location,
            signal_type=SignalType(row.signal_type),
            strength=round(strength_at(row.strength, row.decay_rate, tick - row.written_tick), 6),
            decay_rate=row.decay_rate,
            source=SignalSource(row.source),
            evidence=json.loads(row.evidence),
            last_reinforced=row.updated_at,
        )

    def top(self, connection: Connection, *, tick: int, limit: int = 10) -> list[SignalSummary]:
        """The ``limit`` strongest traces at ``tick``: the top of each decay rate's index, merged."""
        candidates = []
        for rate in DecayRate:
            rows = connection.execute(
                select(_P.c.location, _P.c.signal_type, _P.c.strength, _P.c.written_tick, _P.c.updated_at)
                .where(_P.c.decay_rate == float(rate.value))
                .order_by(_P.c.rank_key.desc())
                .limit(limit)
            ).all()
            for row in rows:
                strength = strength_at(row.strength, rate.value, tick - row.written_tick)
                candidates.append((strength, row))
        candidates.sort(key=lambda item: (-item[0], item[1].location, item[1].signal_type))
        return [
            SignalSummary(
                key=f"{row.location}:{row.signal_type}",
                location=row.location,
                signal_type=SignalType(row.signal_type),
                strength=round(strength, 6),
                updated_at=row.updated_at,
            )
            for strength, row in candidates[:limit]
        ]

    def evaporate(self, connection: Connection) -> int:
        """Advance one tick and delete the traces that reach ``min_strength`` at it; returns the new tick."""
        tick = int(
            connection.execute(
                update(_STATE)
                .where(_STATE.c.id == 1)
                .values(tick_count=_STATE.c.tick_count + 1)
                .returning(_STATE.c.tick_count)
            ).scalar_one()
        )
        removed = connection.execute(delete(_P).where(_P.c.expires_tick <= tick)).rowcount
        if removed:
            connection.execute(
                update(_STATE).where(_STATE.c.id == 1).values(trace_count=_STATE.c.trace_count - removed)
            )
        return tick

    def dependency_traces(self, connection: Connection) -> list[tuple[str, float, int, float]]:
        """(location, updated_at, deposits, strength now) of every live DEPENDENCY trace."""
        tick = self.current_tick(connection)
        rows = connection.execute(
            select(_P.c.location, _P.c.updated_at, _P.c.deposits, _P.c.strength, _P.c.decay_rate, _P.c.written_tick)
            .where(_P.c.signal_type == SignalType.DEPENDENCY.value)
            .where(_P.c.expires_tick > tick)
        ).all()
        return [
            (
                row.location,
                row.updated_at,
                row.deposits,
                strength_at(row.strength, row.decay_rate, tick - row.written_tick),
            )
            for row in rows
        ]
