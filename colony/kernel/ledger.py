"""The resource ledger: per-period budgets, reserved on EXECUTE, settled on record, released on expiry.

A period is one row holding, per dimension, what is used, what is reserved by verdicts in
flight, what expired reservations released, and the ceiling. A reservation is one
conditional ``UPDATE`` whose ``WHERE`` checks every dimension (``used + reserved + x <=
max``), so concurrent proposers can never overspend, whatever the database interleaves.
On PostgreSQL a proposal's reservation is a guard (:data:`~colony.kernel.store.GUARD_FAILED`):
when it does not fit it undoes its transaction, so it can go out with the ``COMMIT``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Float, Update, bindparam, case, literal_column, select, update
from sqlalchemy.engine import Dialect

from colony.kernel.checks import BUDGET_DIMENSIONS
from colony.kernel.models import BudgetDimension
from colony.kernel.prepared import Prepared
from colony.kernel.store import GuardFailed, dialect_insert, tables

__all__ = ["BUDGET_DIMENSIONS", "ResourceLedger"]

_B = tables.budget_periods
_IN_PERIOD = _B.c.period == bindparam("in_period")


def _adding(prefix: str, *suffixes: str) -> dict[Any, Any]:
    """``column = column + :<prefix>_<dimension>`` for each dimension and column suffix."""
    return {
        _B.c[f"{name}_{suffix}"]: _B.c[f"{name}_{suffix}"] + bindparam(f"{prefix}_{name}", type_=Float)
        for suffix in suffixes
        for name in BUDGET_DIMENSIONS
    }


def _new_period(dialect: Dialect) -> Any:
    values: dict[str, Any] = {"period": bindparam("in_period")}
    for name in BUDGET_DIMENSIONS:
        values |= {f"{name}_{column}": literal_column("0.0") for column in ("used", "reserved", "expired")}
        values[f"{name}_max"] = bindparam(f"max_{name}", type_=Float)
    return dialect_insert(dialect)(_B).values(values).on_conflict_do_nothing()


def _counting_overspend() -> dict[Any, Any]:
    """``overspent = used + use - max`` once charged usage passes the ceiling (measured work is never refused)."""
    counted = {}
    for name in BUDGET_DIMENSIONS:
        after = _B.c[f"{name}_used"] + bindparam(f"use_{name}", type_=Float)
        ceiling, overspent = _B.c[f"{name}_max"], _B.c[f"{name}_overspent"]
        counted[overspent] = case((after > ceiling, after - ceiling), else_=overspent)
    return counted


_ENSURE_PERIOD = Prepared(_new_period)
_CHARGE = Prepared(update(_B).where(_IN_PERIOD).values(_adding("use", "used") | _counting_overspend()))


def _freeing_held() -> dict[Any, Any]:
    """``reserved = reserved - :held_<dimension>`` for each dimension: a reservation let go."""
    return {
        _B.c[f"{name}_reserved"]: _B.c[f"{name}_reserved"] - bindparam(f"held_{name}", type_=Float)
        for name in BUDGET_DIMENSIONS
    }


# Released on expiry: the held amounts counted as expired. Settled by an outcome: the actual usage counted as used.
_RELEASE = Prepared(update(_B).where(_IN_PERIOD).values(_freeing_held() | _adding("held", "expired")))
_SETTLE = Prepared(
    update(_B).where(_IN_PERIOD).values(_freeing_held() | _adding("use", "used") | _counting_overspend())
)
_USAGE = Prepared(select(_B).where(_IN_PERIOD))
# Growing a reservation by what the ceiling leaves: the period's row read and locked, then its reservation raised.
_GROWING = {
    name: Prepared(
        select(
            _B.c[f"{name}_used"].label("used"),
            _B.c[f"{name}_reserved"].label("reserved"),
            _B.c[f"{name}_max"].label("ceiling"),
        )
        .where(_IN_PERIOD)
        .with_for_update()
    )
    for name in BUDGET_DIMENSIONS
}
_GROWN = {
    name: Prepared(
        update(_B)
        .where(_IN_PERIOD)
        .values({_B.c[f"{name}_reserved"]: _B.c[f"{name}_reserved"] + bindparam("extra", type_=Float)})
    )
    for name in BUDGET_DIMENSIONS
}


class ResourceLedger:
    """Budgets per period and dimension; every method works inside a caller's transaction."""

    def __init__(self, limits: dict[str, float], period_seconds: float) -> None:
        self.limits = limits
        self.period_seconds = period_seconds
        self._reserve = Prepared(self._reserve_statement())
        # PostgreSQL: the same update, as a guard that undoes its transaction when the estimate does not fit.
        reserved = self._reserve_statement().returning(_B.c.period).cte("reserved")
        self._reserve_or_abort = Prepared(select(literal_column("1 / count(*)")).select_from(reserved))

    @staticmethod
    def _reserve_statement() -> Update:
        """``UPDATE ... SET reserved += g WHERE period = p AND used + reserved + x <= max`` for every dimension.

        ``x`` is the estimate that must fit; ``g`` what is granted, at least ``x`` (a reservation
        grown, in the same statement, toward the runtime its call may take: see ``Reservations.grant``).
        """
        statement = update(_B).where(_IN_PERIOD)
        increments = {}
        for name in BUDGET_DIMENSIONS:
            amount = bindparam(f"add_{name}", type_=Float)
            used, reserved, ceiling = _B.c[f"{name}_used"], _B.c[f"{name}_reserved"], _B.c[f"{name}_max"]
            statement = statement.where(used + reserved + amount <= ceiling)
            increments[f"{name}_reserved"] = reserved + bindparam(f"grant_{name}", type_=Float)
        return statement.values(**increments)

    def period(self, now: float) -> int:
        """The budget period ``now`` falls in (rollover happens by moving to the next row)."""
        return int(now // self.period_seconds)

    def ensure_period(self, connection: Connection, period: int) -> None:
        """Create ``period``'s row with this ledger's limits, unless it exists."""
        limits = {f"max_{name}": self.limits[name] for name in BUDGET_DIMENSIONS}
        _ENSURE_PERIOD.send(connection, {"in_period": period} | limits)

    def covers(self, row: Mapping[str, Any] | None, estimate: Mapping[str, float]) -> bool:
        """Whether ``estimate`` fits the period ``row`` (None: a period nothing was reserved in yet)."""
        for name in BUDGET_DIMENSIONS:
            amount = estimate.get(name, 0.0)
            if row is None or row[f"{name}_max"] is None:
                if amount > self.limits[name]:
                    return False
            elif row[f"{name}_used"] + row[f"{name}_reserved"] + amount > row[f"{name}_max"]:
                return False
        return True

    def fits(self, connection: Connection, estimate: dict[str, float], now: float) -> bool:
        """Whether ``estimate`` would fit this period now (reserves nothing)."""
        rows = _USAGE.all(connection, {"in_period": self.period(now)})
        return self.covers(rows[0] if rows else None, estimate)

    @staticmethod
    def _amounts(
        period: int, estimate: Mapping[str, float], grant: Mapping[str, float] | None
    ) -> dict[str, float | int]:
        granted = estimate if grant is None else grant
        return (
            {"in_period": period}
            | {f"add_{name}": float(estimate.get(name, 0.0)) for name in BUDGET_DIMENSIONS}
            | {f"grant_{name}": float(granted.get(name, 0.0)) for name in BUDGET_DIMENSIONS}
        )

    def reserve(
        self, connection: Connection, estimate: dict[str, float], now: float, grant: Mapping[str, float] | None = None
    ) -> int | None:
        """Reserve ``grant`` (default: ``estimate``) if ``estimate`` fits this period; its period, or None."""
        period = self.period(now)
        parameters = self._amounts(period, estimate, grant)
        if self._reserve.rowcount(connection, parameters) == 1:
            return period
        self.ensure_period(connection, period)
        return period if self._reserve.rowcount(connection, parameters) == 1 else None

    def reserve_or_abort(
        self,
        connection: Connection,
        estimate: Mapping[str, float],
        period: int,
        grant: Mapping[str, float] | None = None,
    ) -> None:
        """Reserve ``grant`` (default: ``estimate``) in ``period`` (its row exists) if ``estimate`` fits, or undo all.

        On PostgreSQL the guard is sent without waiting, and the transaction fails at its
        commit; elsewhere the update runs at once.

        Raises:
            GuardFailed: the estimate does not fit (from :meth:`Store.run` on PostgreSQL).
        """
        parameters = self._amounts(period, estimate, grant)
        if connection.dialect.name == "postgresql":
            self._reserve_or_abort.send(connection, parameters)
        elif self._reserve.rowcount(connection, parameters) != 1:
            raise GuardFailed(f"the budget of period {period} cannot cover {dict(estimate)}")

    def settle(self, connection: Connection, period: int, reserved: dict[str, float], actual: dict[str, float]) -> None:
        """Release a reservation and charge the actual usage (the reservation's amount where none is given)."""
        parameters: dict[str, float | int] = {"in_period": period}
        for name in BUDGET_DIMENSIONS:
            held = float(reserved.get(name, 0.0))
            parameters |= {f"held_{name}": held, f"use_{name}": float(actual.get(name, held))}
        _SETTLE.send(connection, parameters)

    @staticmethod
    def grow(connection: Connection, period: int, name: str, wanted: float) -> float:
        """Reserve up to ``wanted`` more of ``name`` in ``period``, as much as the ceiling leaves; how much.

        The row is locked (``FOR UPDATE``; on SQLite the transaction holds the write lock), so two
        calls growing at once never reserve the same headroom.
        """
        rows = _GROWING[name].all(connection, {"in_period": period})
        if not rows or wanted <= 0:
            return 0.0
        row = rows[0]
        extra = max(0.0, min(float(wanted), row["ceiling"] - row["used"] - row["reserved"]))
        if extra > 0:
            _GROWN[name].send(connection, {"in_period": period, "extra": extra})
        return extra

    def charge(self, connection: Connection, actual: dict[str, float], now: float) -> None:
        """Charge usage reported without a reservation to the current period."""
        if not actual:
            return
        period = self.period(now)
        self.ensure_period(connection, period)
        amounts = {f"use_{name}": float(actual.get(name, 0.0)) for name in BUDGET_DIMENSIONS}
        _CHARGE.send(connection, {"in_period": period} | amounts)

    def release(self, connection: Connection, period: int, held: dict[str, float]) -> None:
        """Give back an expired reservation's ``held`` amounts, and count them as expired in its period."""
        amounts = {f"held_{name}": float(held.get(name, 0.0)) for name in BUDGET_DIMENSIONS}
        _RELEASE.send(connection, {"in_period": period} | amounts)

    def usage(self, connection: Connection, now: float) -> dict[str, BudgetDimension]:
        """``{dimension: {used, reserved, expired, max}}`` for the current period."""
        rows = _USAGE.all(connection, {"in_period": self.period(now)})
        if not rows:
            return {name: BudgetDimension(used=0.0, max=self.limits[name]) for name in BUDGET_DIMENSIONS}
        mapping = rows[0]
        return {
            name: BudgetDimension(
                used=round(mapping[f"{name}_used"], 6),
                reserved=max(0.0, round(mapping[f"{name}_reserved"], 6)),
                expired=round(mapping[f"{name}_expired"], 6),
                max=mapping[f"{name}_max"],
                overspent=round(mapping[f"{name}_overspent"], 6),
            )
            for name in BUDGET_DIMENSIONS
        }
