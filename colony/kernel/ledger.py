"""The resource ledger: per-period budgets, reserved on EXECUTE, settled on record, released on expiry.

A period is one row holding, per dimension, what is used, what is reserved by verdicts in
flight, what expired reservations released, and the ceiling. A reservation is one
conditional ``UPDATE`` whose ``WHERE`` checks every dimension (``used + reserved + x <=
max``), so concurrent proposers can never overspend, whatever the database interleaves.
"""

from __future__ import annotations

from sqlalchemy import Connection, Float, Update, bindparam, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from colony.kernel.checks import BUDGET_DIMENSIONS
from colony.kernel.models import BudgetDimension
from colony.kernel.store import Prepared, tables

__all__ = ["BUDGET_DIMENSIONS", "ResourceLedger"]

_B = tables.budget_periods


class ResourceLedger:
    """Budgets per period and dimension; every method works inside a caller's transaction."""

    def __init__(self, limits: dict[str, float], period_seconds: float) -> None:
        self.limits = limits
        self.period_seconds = period_seconds
        self._reserve = Prepared(self._reserve_statement())
        self._settle = Prepared(
            update(_B)
            .where(_B.c.period == bindparam("in_period"))
            .values(
                {_B.c[f"{name}_reserved"]: _B.c[f"{name}_reserved"] - bindparam(f"held_{name}", type_=Float)
                 for name in BUDGET_DIMENSIONS}
                | {_B.c[f"{name}_used"]: _B.c[f"{name}_used"] + bindparam(f"use_{name}", type_=Float)
                   for name in BUDGET_DIMENSIONS}
            )
        )  # fmt: skip

    @staticmethod
    def _reserve_statement() -> Update:
        """``UPDATE ... SET reserved += x WHERE period = p AND used + reserved + x <= max`` for every dimension."""
        statement = update(_B).where(_B.c.period == bindparam("in_period"))
        increments = {}
        for name in BUDGET_DIMENSIONS:
            amount = bindparam(f"add_{name}", type_=Float)
            used, reserved, ceiling = _B.c[f"{name}_used"], _B.c[f"{name}_reserved"], _B.c[f"{name}_max"]
            statement = statement.where(used + reserved + amount <= ceiling)
            increments[f"{name}_reserved"] = reserved + amount
        return statement.values(**increments)

    def period(self, now: float) -> int:
        """The budget period ``now`` falls in (rollover happens by moving to the next row)."""
        return int(now // self.period_seconds)

    def _ensure_period(self, connection: Connection, period: int) -> None:
        values: dict[str, float | int] = {"period": period}
        for name in BUDGET_DIMENSIONS:
            values |= {f"{name}_used": 0.0, f"{name}_reserved": 0.0, f"{name}_max": self.limits[name]}
            values |= {f"{name}_expired": 0.0}
        upsert = sqlite_insert if connection.dialect.name == "sqlite" else pg_insert
        connection.execute(upsert(_B).values(**values).on_conflict_do_nothing())

    def fits(self, connection: Connection, estimate: dict[str, float], now: float) -> bool:
        """Whether ``estimate`` would fit this period now (reserves nothing)."""
        row = connection.execute(select(_B).where(_B.c.period == self.period(now))).first()
        for name in BUDGET_DIMENSIONS:
            amount = estimate.get(name, 0.0)
            if row is None:
                if amount > self.limits[name]:
                    return False
                continue
            mapping = row._mapping
            if mapping[f"{name}_used"] + mapping[f"{name}_reserved"] + amount > mapping[f"{name}_max"]:
                return False
        return True

    def reserve(self, connection: Connection, estimate: dict[str, float], now: float) -> int | None:
        """Reserve ``estimate`` in the current period with one conditional update; its period, or None."""
        period = self.period(now)
        parameters = {"in_period": period} | {
            f"add_{name}": float(estimate.get(name, 0.0)) for name in BUDGET_DIMENSIONS
        }
        if self._reserve.rowcount(connection, parameters) == 1:
            return period
        self._ensure_period(connection, period)
        return period if self._reserve.rowcount(connection, parameters) == 1 else None

    def settle(self, connection: Connection, period: int, reserved: dict[str, float], actual: dict[str, float]) -> None:
        """Release a reservation and charge the actual usage (the reservation's amount where none is given)."""
        parameters: dict[str, float | int] = {"in_period": period}
        for name in BUDGET_DIMENSIONS:
            held = float(reserved.get(name, 0.0))
            parameters |= {f"held_{name}": held, f"use_{name}": float(actual.get(name, held))}
        self._settle.rowcount(connection, parameters)

    def charge(self, connection: Connection, actual: dict[str, float], now: float) -> None:
        """Charge usage reported without a reservation to the current period."""
        if not actual:
            return
        period = self.period(now)
        self._ensure_period(connection, period)
        values = {f"{name}_used": _B.c[f"{name}_used"] + float(amount) for name, amount in actual.items()}
        connection.execute(update(_B).where(_B.c.period == period).values(**values))

    def release(self, connection: Connection, period: int, held: dict[str, float]) -> None:
        """Give back an expired reservation's ``held`` amounts, and count them as expired in its period."""
        values = {}
        for name in BUDGET_DIMENSIONS:
            amount = float(held.get(name, 0.0))
            values[f"{name}_reserved"] = _B.c[f"{name}_reserved"] - amount
            values[f"{name}_expired"] = _B.c[f"{name}_expired"] + amount
        connection.execute(update(_B).where(_B.c.period == period).values(**values))

    def usage(self, connection: Connection, now: float) -> dict[str, BudgetDimension]:
        """``{dimension: {used, reserved, expired, max}}`` for the current period."""
        row = connection.execute(select(_B).where(_B.c.period == self.period(now))).first()
        if row is None:
            return {name: BudgetDimension(used=0.0, max=self.limits[name]) for name in BUDGET_DIMENSIONS}
        mapping = row._mapping
        return {
            name: BudgetDimension(
                used=round(mapping[f"{name}_used"], 6),
                reserved=max(0.0, round(mapping[f"{name}_reserved"], 6)),
                expired=round(mapping[f"{name}_expired"], 6),
                max=mapping[f"{name}_max"],
            )
            for name in BUDGET_DIMENSIONS
        }
