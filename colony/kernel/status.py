"""The colony's dashboard snapshot, read in one transaction so its parts agree."""

from __future__ import annotations

from sqlalchemy import Connection, select, update

from colony.kernel.consequences import ConsequenceMemory
from colony.kernel.ledger import ResourceLedger
from colony.kernel.models import ColonyStatus, PheromoneSummary
from colony.kernel.pheromones import PheromoneStore
from colony.kernel.roles import RoleAdapter
from colony.kernel.store import tables

__all__ = ["StatusReporter"]

_STATE = tables.kernel_state


class StatusReporter:
    """Assembles :class:`ColonyStatus` from the subsystems."""

    def __init__(self, pheromones: PheromoneStore, ledger: ResourceLedger, roles: RoleAdapter) -> None:
        self.pheromones = pheromones
        self.ledger = ledger
        self.roles = roles

    def snapshot(self, connection: Connection, now: float) -> ColonyStatus:
        """tick_count, pheromone_summary, budget_usage, role_distribution, recent_consequences, pruning count."""
        state = connection.execute(select(_STATE).where(_STATE.c.id == 1)).one()
        return ColonyStatus(
            tick_count=state.tick_count,
            pheromone_summary=PheromoneSummary(
                total_signals=state.trace_count, top_signals=self.pheromones.top(connection, tick=state.tick_count)
            ),
            budget_usage=self.ledger.usage(connection, now),
            role_distribution=self.roles.distribution(connection),
            recent_consequences=ConsequenceMemory.recent(connection),
            pruning_candidates_count=state.pruning_candidates,
        )

    @staticmethod
    def remember_pruning(connection: Connection, count: int) -> None:
        """Keep the last pruning report's size for the status."""
        connection.execute(update(_STATE).where(_STATE.c.id == 1).values(pruning_candidates=count))
