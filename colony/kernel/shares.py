"""Per-agent shares: no one agent's open reservations may hold more than a fraction of a period's budget.

``agents.held_<dimension>`` is what the agent's open reservations hold. It grows by one
conditional ``UPDATE ... WHERE held + x <= cap`` when an EXECUTE reserves (so concurrent
proposals of one agent can never pass the cap, whatever the database interleaves), and
shrinks in the same transaction that settles or expires a reservation. On PostgreSQL the
hold is a guard (:data:`~colony.kernel.store.GUARD_FAILED`) sent with the rest of the
pipelined transaction, like the ledger's reservation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Float, Update, bindparam, literal_column, select, update

from colony.kernel.checks import BUDGET_DIMENSIONS
from colony.kernel.prepared import Prepared
from colony.kernel.roles import COUNTING
from colony.kernel.store import GuardFailed, tables

__all__ = ["AgentShares"]

_A = tables.agents
_THIS_AGENT = _A.c.agent_id == bindparam("agent")


def _changing(sign: str) -> dict[Any, Any]:
    """``held_<dimension> = held_<dimension> <sign> :amount_<dimension>`` for each dimension."""
    return {
        _A.c[f"held_{name}"]: _A.c[f"held_{name}"].op(sign)(bindparam(f"amount_{name}", type_=Float))
        for name in BUDGET_DIMENSIONS
    }


def _hold_statement() -> Update:
    """``held += grant`` where ``held + amount <= cap`` (the grant is the amount, or a reservation grown past it)."""
    statement = update(_A).where(_THIS_AGENT)
    for name in BUDGET_DIMENSIONS:
        held, amount = _A.c[f"held_{name}"], bindparam(f"amount_{name}", type_=Float)
        statement = statement.where(held + amount <= bindparam(f"cap_{name}", type_=Float))
    granted = {
        _A.c[f"held_{name}"]: _A.c[f"held_{name}"] + bindparam(f"grant_{name}", type_=Float)
        for name in BUDGET_DIMENSIONS
    }
    return statement.values(granted)


_HOLD = Prepared(_hold_statement())
# A verdict that reserves budget last is counted in the same update as its hold (one statement on the agent's row).
_HOLD_COUNTED = Prepared(_hold_statement().values(COUNTING))
_HOLD_COUNTED_OR_ABORT = Prepared(
    select(literal_column("1 / count(*)")).select_from(
        _hold_statement().values(COUNTING).returning(_A.c.agent_id).cte("held")
    )
)
_HELD = {
    name: Prepared(select(_A.c[f"held_{name}"].label("held")).where(_THIS_AGENT).with_for_update())
    for name in BUDGET_DIMENSIONS
}
_ADD = Prepared(update(_A).where(_THIS_AGENT).values(_changing("+")))
_FREE = Prepared(update(_A).where(_THIS_AGENT).values(_changing("-")))


class AgentShares:
    """What each agent may hold, and what it holds; every method works inside a caller's transaction."""

    def __init__(self, caps: Mapping[str, float], share: float) -> None:
        self.caps = dict(caps)
        self.share = share

    def _parameters(self, agent_id: str, amounts: Mapping[str, float]) -> dict[str, Any]:
        values: dict[str, Any] = {"agent": agent_id}
        for name in BUDGET_DIMENSIONS:
            values[f"amount_{name}"] = float(amounts.get(name, 0.0))
            values[f"cap_{name}"] = self.caps[name] + 1e-9  # the sum of floats that exactly fill the cap
        return values

    def _holding(
        self, agent_id: str, estimate: Mapping[str, float], grant: Mapping[str, float] | None
    ) -> dict[str, Any]:
        granted = estimate if grant is None else grant
        values = self._parameters(agent_id, estimate)
        return values | {f"grant_{name}": float(granted.get(name, 0.0)) for name in BUDGET_DIMENSIONS}

    def hold(
        self,
        connection: Connection,
        agent_id: str,
        estimate: Mapping[str, float],
        grant: Mapping[str, float] | None = None,
    ) -> bool:
        """Add ``grant`` (default: ``estimate``) to what the agent holds if ``estimate`` fits its share; if it did."""
        return _HOLD.rowcount(connection, self._holding(agent_id, estimate, grant)) == 1

    def hold_or_abort(
        self,
        connection: Connection,
        agent_id: str,
        estimate: Mapping[str, float],
        grant: Mapping[str, float],
        counted: Mapping[str, int],
    ) -> None:
        """Add ``grant`` within the agent's share, and count its verdict, or undo the transaction (the ledger's twin).

        ``counted`` is the verdict's count (``RoleAdapter.counted``); the agent's row must exist.

        Raises:
            GuardFailed: the agent's share cannot carry it (from :meth:`Store.run` on PostgreSQL).
        """
        parameters = self._holding(agent_id, estimate, grant) | dict(counted)
        if connection.dialect.name == "postgresql":
            _HOLD_COUNTED_OR_ABORT.send(connection, parameters)
        elif _HOLD_COUNTED.rowcount(connection, parameters) != 1:
            raise GuardFailed(f"agent {agent_id}'s share cannot cover {dict(estimate)}")

    def room(self, connection: Connection, agent_id: str, name: str, wanted: float) -> float:
        """How much of ``wanted`` more ``name`` the agent's share leaves it; locks the agent's row."""
        if wanted <= 0:
            return 0.0
        rows = _HELD[name].all(connection, {"agent": agent_id})
        if not rows:
            return 0.0
        return max(0.0, min(float(wanted), self.caps[name] - float(rows[0]["held"])))

    def add(self, connection: Connection, agent_id: str, amounts: Mapping[str, float]) -> None:
        """Add ``amounts`` whatever the share (a reservation a person approved)."""
        _ADD.send(connection, self._parameters(agent_id, amounts))

    def free(self, connection: Connection, agent_id: str, amounts: Mapping[str, float]) -> None:
        """Take a settled or expired reservation's ``amounts`` off what the agent holds."""
        _FREE.send(connection, self._parameters(agent_id, amounts))

    def refusal(self, estimate: Mapping[str, float]) -> str:
        """Why a proposal that would pass the agent's share was refused."""
        caps = ", ".join(f"{name} {self.caps[name]:g}" for name in BUDGET_DIMENSIONS)
        wanted = ", ".join(f"{name} {float(estimate.get(name, 0.0)):g}" for name in BUDGET_DIMENSIONS)
        return (
            f"agent budget share exceeded: reserving {wanted} would take this agent's open reservations past its "
            f"share ({self.share:g} of the period's budget: {caps}); report or wait for its earlier reservations"
        )
