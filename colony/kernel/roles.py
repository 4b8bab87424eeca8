"""Roles and trust: who an agent is allowed to be, earned one recorded outcome at a time.

Trust lives in [0, 1]; the role is the highest whose threshold the trust reaches. An
unknown agent starts as SANDBOX with trust 0.1. The update rule is asymmetric: trust is
slow to earn (a share of the headroom to 1.0) and quick to lose (a share of what is held).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Integer, Row, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from colony.kernel.models import Role
from colony.kernel.store import Prepared, tables

__all__ = ["INITIAL_TRUST", "ROLE_THRESHOLDS", "AgentRow", "RoleAdapter", "role_for", "updated_trust"]

INITIAL_TRUST = 0.1
ROLE_THRESHOLDS = {
    Role.SANDBOX: 0.0,
    Role.REPAIR_ANT: 0.25,
    Role.MEMORY_ANT: 0.5,
    Role.DISPATCHER: 0.7,
    Role.GUARD_ANT: 0.85,
}
GAIN_RATE = 0.081  # a perfect outcome closes 8.1% of the gap to 1.0: 0.1 -> 0.173 (seed 001)
LOSS_RATE = 0.2  # a fully bad outcome costs 20% of the trust held
TESTS_WEIGHT = 0.6
FEEDBACK_WEIGHT = 0.4
_A = tables.agents
_LOCK_AGENT = Prepared(select(_A).where(_A.c.agent_id == bindparam("agent")).with_for_update())
_APPLY_OUTCOME = Prepared(
    update(_A)
    .where(_A.c.agent_id == bindparam("agent"))
    .values(
        trust=bindparam("new_trust"),
        role=bindparam("new_role"),
        accepted_proposals=_A.c.accepted_proposals + bindparam("accepted", type_=Integer),
        last_updated=bindparam("now"),
    )
)
_COUNT_PROPOSAL = Prepared(
    update(_A).where(_A.c.agent_id == bindparam("agent")).values(total_proposals=_A.c.total_proposals + 1)
)


def role_for(trust: float) -> Role:
    """The highest role whose threshold ``trust`` reaches."""
    return max((role for role, floor in ROLE_THRESHOLDS.items() if trust >= floor), key=ROLE_THRESHOLDS.__getitem__)


def outcome_quality(tests_passed: bool, human_feedback: float) -> float:
    """A report's quality in [-1, 1]: tests count 0.6, the operator's feedback 0.4."""
    return TESTS_WEIGHT * (1.0 if tests_passed else -1.0) + FEEDBACK_WEIGHT * human_feedback


def updated_trust(trust: float, tests_passed: bool, human_feedback: float) -> float:
    """Trust after one recorded outcome, rounded to 3 decimals and kept in [0, 1]."""
    quality = outcome_quality(tests_passed, human_feedback)
    delta = GAIN_RATE * quality * (1.0 - trust) if quality >= 0 else LOSS_RATE * quality * trust
    return round(min(1.0, max(0.0, trust + delta)), 3)


@dataclass(frozen=True)
class AgentRow:
    """An agent's stored profile, without its consequence history."""

    agent_id: str
    trust: float
    role: Role
    total_proposals: int
    accepted_proposals: int
    last_updated: float


def _row(row: Row[Any] | dict[str, Any]) -> AgentRow:
    fields = row if isinstance(row, dict) else row._mapping
    return AgentRow(
        agent_id=fields["agent_id"],
        trust=fields["trust"],
        role=Role(fields["role"]),
        total_proposals=fields["total_proposals"],
        accepted_proposals=fields["accepted_proposals"],
        last_updated=fields["last_updated"],
    )


class RoleAdapter:
    """Profiles, trust updates and role changes; every method works inside a caller's transaction."""

    def ensure(self, connection: Connection, agent_id: str, now: float, *, proposals: int = 0) -> bool:
        """Create a SANDBOX profile with trust 0.1 for an agent seen for the first time; True if created."""
        upsert = sqlite_insert if connection.dialect.name == "sqlite" else pg_insert
        created = connection.execute(
            upsert(_A)
            .values(
                agent_id=agent_id,
                trust=INITIAL_TRUST,
                role=role_for(INITIAL_TRUST).value,
                total_proposals=proposals,
                accepted_proposals=0,
                last_updated=now,
            )
            .on_conflict_do_nothing()
            .returning(_A.c.agent_id)
        ).first()
        return created is not None

    def get(self, connection: Connection, agent_id: str) -> AgentRow | None:
        """The stored profile, or None for an unknown agent."""
        row = connection.execute(select(_A).where(_A.c.agent_id == agent_id)).first()
        return None if row is None else _row(row)

    def count_proposal(self, connection: Connection, agent_id: str, now: float) -> None:
        """Count one more proposal from ``agent_id``, creating its profile on first sight."""
        if _COUNT_PROPOSAL.rowcount(connection, {"agent": agent_id}) == 1:
            return
        if not self.ensure(connection, agent_id, now, proposals=1):  # another process created it first
            _COUNT_PROPOSAL.rowcount(connection, {"agent": agent_id})

    def apply_outcome(
        self, connection: Connection, agent_id: str, tests_passed: bool, human_feedback: float, now: float
    ) -> tuple[AgentRow, AgentRow]:
        """Update trust and role for one outcome; returns the profile (before, after)."""
        rows = _LOCK_AGENT.all(connection, {"agent": agent_id})
        if not rows:
            self.ensure(connection, agent_id, now)
            rows = _LOCK_AGENT.all(connection, {"agent": agent_id})
        before = _row(rows[0])
        trust = updated_trust(before.trust, tests_passed, human_feedback)
        accepted = 1 if tests_passed and human_feedback >= 0 else 0
        parameters = {"agent": agent_id, "new_trust": trust, "new_role": role_for(trust).value, "now": now}
        _APPLY_OUTCOME.rowcount(connection, parameters | {"accepted": accepted})
        after = AgentRow(
            agent_id=agent_id,
            trust=trust,
            role=role_for(trust),
            total_proposals=before.total_proposals,
            accepted_proposals=before.accepted_proposals + accepted,
            last_updated=now,
        )
        return before, after

    def set_trust(self, connection: Connection, agent_id: str, trust: float, now: float) -> AgentRow:
        """Set an agent's trust (and so its role) directly: an operator's override."""
        self.ensure(connection, agent_id, now)
        connection.execute(
            update(_A)
            .where(_A.c.agent_id == agent_id)
            .values(trust=trust, role=role_for(trust).value, last_updated=now)
        )
        row = self.get(connection, agent_id)
        assert row is not None
        return row

    def distribution(self, connection: Connection) -> dict[str, int]:
        """Agents per role (roles with no agent left out)."""
        rows = connection.execute(select(_A.c.role, func.count()).group_by(_A.c.role)).all()
        return {role.value: count for role in Role for name, count in rows if name == role.value}
