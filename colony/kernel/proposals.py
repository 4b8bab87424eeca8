"""The proposal log: every verdict, with what it reserved and the nonce of its authorization."""

from __future__ import annotations

from sqlalchemy import Connection, insert

from colony.kernel.attestation import Claims
from colony.kernel.gate import GateOutcome
from colony.kernel.models import ProposeActionRequest
from colony.kernel.store import Prepared, tables

__all__ = ["store_proposal"]

_INSERT = Prepared(insert(tables.proposals))


def store_proposal(
    connection: Connection,
    proposal_id: str,
    request: ProposeActionRequest,
    outcome: GateOutcome,
    now: float,
    period: int | None,
    estimate: dict[str, float],
    claims: Claims | None,
) -> None:
    """Append one verdict; a reservation is recorded only when ``period`` is set (EXECUTE)."""
    reserved = period is not None
    _INSERT.rowcount(
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
        },
    )
