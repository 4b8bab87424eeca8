"""The proposal log: every verdict, with what it reserved, until when, and the nonce of its authorization."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, insert, select, update

from colony.kernel.attestation import Claims
from colony.kernel.checks import BUDGET_DIMENSIONS
from colony.kernel.gate import GateOutcome
from colony.kernel.models import ProposeActionRequest, Role, SignalType
from colony.kernel.pheromones import strength_at
from colony.kernel.prepared import Prepared
from colony.kernel.reservations import EARLIEST_EXPIRY
from colony.kernel.roles import INITIAL_TRUST, role_for
from colony.kernel.schema import tables

__all__ = ["GateReading", "new_proposal_id", "open_reservation", "read_for_gate", "store_proposal"]

_INSERT = Prepared(insert(tables.proposals))
_STATE, _AGENTS, _TRACES, _BUDGET = tables.kernel_state, tables.agents, tables.pheromones, tables.budget_periods
_HEAD = tables.audit_head
_BUDGET_COLUMNS = tuple(
    _BUDGET.c[f"{name}_{column}"] for name in BUDGET_DIMENSIONS for column in ("used", "reserved", "max")
)
# Everything a verdict reads, in one round trip: the tick, the agent's trust, role and held runtime, the traces at the
# target, the period's budget, whether a reservation has lapsed (then the kernel releases it before it weighs the
# budget), and the audit log's head.
_GATE_READING = Prepared(
    select(
        EARLIEST_EXPIRY.label("earliest_expiry"),  # one probe of the partial index of open reservations
        _STATE.c.tick_count,
        _HEAD.c.seq.label("audit_seq"),
        _HEAD.c.hash.label("audit_hash"),
        _AGENTS.c.trust,
        _AGENTS.c.role,
        _AGENTS.c.held_runtime_seconds,
        _TRACES.c.signal_type,
        _TRACES.c.strength,
        _TRACES.c.decay_rate,
        _TRACES.c.written_tick,
        _TRACES.c.expires_tick,
        _BUDGET.c.period,
        *_BUDGET_COLUMNS,
    )
    .select_from(
        _STATE.join(_HEAD, _HEAD.c.id == _STATE.c.id)
        .outerjoin(_AGENTS, _AGENTS.c.agent_id == bindparam("agent"))
        .outerjoin(_TRACES, _TRACES.c.location == bindparam("location"))
        .outerjoin(_BUDGET, _BUDGET.c.period == bindparam("in_period"))
    )
    .where(_STATE.c.id == 1)
)


@dataclass(frozen=True)
class GateReading:
    """What the gate weighs from the database: read without locks, so no lock is held while it decides.

    On SQLite the transaction holds the write lock already, so what it read stays true until
    the transaction writes it: the runtime a reservation can grow to, and the audit head.
    """

    tick: int
    trust: float
    role: Role
    strengths: dict[SignalType, float]
    earliest_expiry: float | None = None
    known_agent: bool = True
    budget: dict[str, float] | None = None  # the period's used, reserved and max per dimension; None: no row yet
    held_runtime: float = 0.0  # the runtime seconds the agent's open reservations hold
    audit_head: tuple[int, str] | None = None  # the audit log's last seq and hash

    def lapsed(self, now: float) -> bool:
        """Whether some open reservation's authorization has expired by ``now``."""
        return self.earliest_expiry is not None and self.earliest_expiry <= now


def read_for_gate(connection: Connection, agent_id: str, target: str, period: int) -> GateReading:
    """What the gate weighs: the tick, trust and role (an unknown agent's defaults), traces at ``target``, budget.

    ``period`` names the budget period whose row is read.
    """
    rows = _GATE_READING.all(connection, {"agent": agent_id, "location": target, "in_period": period})
    first = rows[0]
    tick = int(first["tick_count"])
    strengths = {
        SignalType(row["signal_type"]): strength_at(row["strength"], row["decay_rate"], tick - row["written_tick"])
        for row in rows
        if row["signal_type"] is not None and row["expires_tick"] > tick
    }
    expiry = first["earliest_expiry"]
    budget = None if first["period"] is None else {column.name: first[column.name] for column in _BUDGET_COLUMNS}
    head = (int(first["audit_seq"]), str(first["audit_hash"]))
    if first["role"] is None:
        return GateReading(tick, INITIAL_TRUST, role_for(INITIAL_TRUST), strengths, expiry, False, budget, 0.0, head)
    held = float(first["held_runtime_seconds"])
    return GateReading(tick, first["trust"], Role(first["role"]), strengths, expiry, True, budget, held, head)


def new_proposal_id() -> str:
    """A time-ordered UUID (version 7 layout: unix milliseconds, then random bits).

    Ordered ids append to the end of the proposal index instead of landing on a random
    page of it, which keeps each commit's write small.
    """
    millis = time.time_ns() // 1_000_000
    bits = (millis & (2**48 - 1)) << 80 | secrets.randbits(80)
    bits = (bits & ~(0xF << 76)) | (0x7 << 76)  # version 7
    bits = (bits & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def store_proposal(
    connection: Connection,
    proposal_id: str,
    request: ProposeActionRequest,
    outcome: GateOutcome,
    now: float,
    period: int | None,
    estimate: dict[str, float],
    claims: Claims | None,
    expires_at: float,
) -> None:
    """Append one verdict; a reservation (open until ``expires_at``) is recorded only when ``period`` is set."""
    reserved = period is not None
    _INSERT.send(
        connection,
        {
            "proposal_id": proposal_id,
            "agent_id": request.agent_id,
            "action_type": request.action_type,
            "target": request.target,
            "decision": outcome.decision.value,
            "gate_score": outcome.gate_score,
            "created_at": now,
            "period": period,
            "reserved_llm_calls": estimate["llm_calls"] if reserved else 0.0,
            "reserved_runtime_seconds": estimate["runtime_seconds"] if reserved else 0.0,
            "token_nonce": claims.nonce if claims else None,
            "consumed_at": None,
            "expires_at": expires_at if reserved else None,
            "reservation": "open" if reserved else None,
        },
    )


def open_reservation(
    connection: Connection,
    proposal_id: str,
    period: int,
    estimate: dict[str, float],
    claims: Claims | None,
    expires_at: float,
) -> None:
    """Give a held proposal a person approved what an EXECUTE gets: a reservation open until ``expires_at``."""
    connection.execute(
        update(tables.proposals)
        .where(tables.proposals.c.proposal_id == proposal_id)
        .values(
            period=period,
            reserved_llm_calls=estimate["llm_calls"],
            reserved_runtime_seconds=estimate["runtime_seconds"],
            token_nonce=claims.nonce if claims else None,
            expires_at=expires_at,
            reservation="open",
        )
    )
