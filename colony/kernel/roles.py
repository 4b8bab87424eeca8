"""Roles and trust: who an agent is allowed to be, earned one recorded outcome at a time.

Trust lives in [0, 1]; the role is the highest whose threshold the trust reaches. An
unknown agent starts as SANDBOX with trust 0.1. The update rule is asymmetric: trust is
slow to earn (a share of the headroom to 1.0) and quick to lose (a share of what is held).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Float, Integer, Row, bindparam, func, select, update

from colony.kernel.checks import BUDGET_DIMENSIONS
from colony.kernel.counters import Counts
from colony.kernel.models import Decision, Role
from colony.kernel.prepared import Pending, Prepared
from colony.kernel.store import dialect_insert, tables

__all__ = ["COUNTING", "INITIAL_TRUST", "ROLE_THRESHOLDS", "AgentRow", "RoleAdapter", "role_for", "updated_trust"]

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
_COUNTERS = {
    "total": "total_proposals",
    "accepted": "accepted_proposals",
    "rejected": "rejected_proposals",
    "held": "held_proposals",
    "unreported": "unreported_rejections",
}
_APPLY_OUTCOME = Prepared(
    update(_A)
    .where(_A.c.agent_id == bindparam("agent"))
    .values(
        trust=bindparam("new_trust"),
        role=bindparam("new_role"),
        last_updated=bindparam("now"),
        **{column: bindparam(f"set_{name}", type_=Integer) for name, column in _COUNTERS.items()},
        # What the reservation the outcome settles held comes off the agent's share in the same update.
        **{f"held_{name}": _A.c[f"held_{name}"] - bindparam(f"free_{name}", type_=Float) for name in BUDGET_DIMENSIONS},
    )
)
_SET_COUNTS = Prepared(
    update(_A)
    .where(_A.c.agent_id == bindparam("agent"))
    .values(**{column: bindparam(f"set_{name}", type_=Integer) for name, column in _COUNTERS.items()})
)
# A verdict only adds (see counters.py), so concurrent proposers need no lock on the agent's row to count.
#: ``counter = counter + :add_<name>`` for each of an agent's proposal counters: counting a verdict.
COUNTING: dict[str, Any] = {
    column: _A.c[column] + bindparam(f"add_{name}", type_=Integer) for name, column in _COUNTERS.items()
}
_COUNT_PROPOSAL = Prepared(update(_A).where(_A.c.agent_id == bindparam("agent")).values(**COUNTING))
_ENSURE = Prepared(
    lambda dialect: (
        dialect_insert(dialect)(_A)
        .values(
            agent_id=bindparam("agent"),
            trust=INITIAL_TRUST,
            role=role_for(INITIAL_TRUST).value,
            total_proposals=0,
            accepted_proposals=0,
            rejected_proposals=0,
            held_proposals=0,
            unreported_rejections=0,
            last_updated=bindparam("now"),
        )
        .on_conflict_do_nothing()
    )
)
_VERDICT_INCREMENTS = {
    decision: {f"add_{name}": getattr(Counts().on_verdict(decision), name) for name in _COUNTERS}
    for decision in Decision
}


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
    counts: Counts
    last_updated: float

    @property
    def total_proposals(self) -> int:
        """Proposals submitted."""
        return self.counts.total

    @property
    def accepted_proposals(self) -> int:
        """Proposals whose outcome passed."""
        return self.counts.accepted


def _row(row: Row[Any] | dict[str, Any]) -> AgentRow:
    fields = row if isinstance(row, dict) else row._mapping
    return AgentRow(
        agent_id=fields["agent_id"],
        trust=fields["trust"],
        role=Role(fields["role"]),
        counts=Counts(**{name: fields[column] for name, column in _COUNTERS.items()}),
        last_updated=fields["last_updated"],
    )


def _counter_values(counts: Counts) -> dict[str, int]:
    return {f"set_{name}": getattr(counts, name) for name in _COUNTERS}


class RoleAdapter:
    """Profiles, trust updates and role changes; every method works inside a caller's transaction."""

    def ensure(self, connection: Connection, agent_id: str, now: float) -> None:
        """Create a SANDBOX profile with trust 0.1 for an agent seen for the first time (no-op otherwise)."""
        _ENSURE.send(connection, {"agent": agent_id, "now": now})

    def get(self, connection: Connection, agent_id: str) -> AgentRow | None:
        """The stored profile, or None for an unknown agent."""
        row = connection.execute(select(_A).where(_A.c.agent_id == agent_id)).first()
        return None if row is None else _row(row)

    def count_proposal(
        self, connection: Connection, agent_id: str, decision: Decision, now: float, *, known: bool
    ) -> None:
        """Count one more proposal from ``agent_id`` as its verdict places it, creating its profile on first sight.

        ``known`` says whether the profile existed when the gate read it (a profile is never deleted).
        """
        if not known:
            self.ensure(connection, agent_id, now)  # or another process created it first: count either way
        _COUNT_PROPOSAL.send(connection, {"agent": agent_id, **_VERDICT_INCREMENTS[decision]})

    @staticmethod
    def counted(decision: Decision) -> dict[str, int]:
        """The parameters of :data:`COUNTING` for one more proposal with ``decision``."""
        return _VERDICT_INCREMENTS[decision]

    @staticmethod
    def lock(connection: Connection, agent_id: str) -> Pending:
        """Lock (and read) the agent's profile, for :meth:`apply_outcome`."""
        return _LOCK_AGENT.send(connection, {"agent": agent_id})

    def _locked(self, connection: Connection, agent_id: str, now: float, sent: Pending | None = None) -> AgentRow:
        rows = (sent or self.lock(connection, agent_id)).rows()
        if not rows:
            self.ensure(connection, agent_id, now)
            rows = _LOCK_AGENT.all(connection, {"agent": agent_id})
        return _row(rows[0])

    def expire(self, connection: Connection, agent_id: str, lapsed: int, now: float) -> AgentRow:
        """Count ``lapsed`` of the agent's reservations as expired (held -> rejected); its profile after."""
        row = self._locked(connection, agent_id, now)
        counts = row.counts
        for _ in range(lapsed):
            counts = counts.on_expiry()
        _SET_COUNTS.send(connection, {"agent": agent_id, **_counter_values(counts)})
        return AgentRow(row.agent_id, row.trust, row.role, counts, row.last_updated)

    def apply_outcome(
        self,
        connection: Connection,
        agent_id: str,
        tests_passed: bool,
        human_feedback: float,
        now: float,
        locked: Pending | None = None,
        *,
        may_raise: bool = True,
        freed: Mapping[str, float] | None = None,
    ) -> tuple[AgentRow, AgentRow]:
        """Update trust, role and counters for one outcome (see counters.py); the profile (before, after).

        ``locked`` is what :meth:`lock` sent earlier in this transaction, if it did. Without
        ``may_raise`` (the agent's own word) the outcome may lower trust but never raise it.
        ``freed`` is what the reservation the outcome settles held: it leaves the agent's share.
        """
        before = self._locked(connection, agent_id, now, locked)
        trust = updated_trust(before.trust, tests_passed, human_feedback)
        if not may_raise:
            trust = min(before.trust, trust)
        counts = before.counts.on_outcome(tests_passed and human_feedback >= 0)
        parameters = {"agent": agent_id, "new_trust": trust, "new_role": role_for(trust).value, "now": now}
        parameters |= {f"free_{name}": float((freed or {}).get(name, 0.0)) for name in BUDGET_DIMENSIONS}
        _APPLY_OUTCOME.send(connection, parameters | _counter_values(counts))
        after = AgentRow(agent_id=agent_id, trust=trust, role=role_for(trust), counts=counts, last_updated=now)
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
