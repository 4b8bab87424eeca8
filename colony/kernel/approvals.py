"""Approval requests: a HOLD verdict waits here for a person, and is decided exactly once.

A HOLD opens a ``pending`` request in the transaction that stores the verdict. It then
changes state once, by a conditional ``UPDATE ... WHERE state = 'pending'`` (a
compare-and-set), so two reviewers racing in two processes get one decision and one
:class:`~colony.errors.ApprovalError`:

- **approved**: the budget is reserved then, and the proposal gets a one-time
  authorization (its nonce, like an EXECUTE's), handed out once to the call that
  resubmits it (:meth:`Approvals.claim`, a second compare-and-set on ``executed_at``);
- **rejected** / **expired**: a refusal is recorded in the same transaction: trust
  updated as a failed outcome (a rejection counts as negative feedback), the held
  proposal counted as rejected, a ``rejection`` / ``expiry`` history entry and a
  FAILURE trace at the target. The tick expires overdue requests, so expiry never
  depends on the process that was waiting.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, func, insert, literal_column, select, update

from colony.kernel.audit import AuditLog
from colony.kernel.auditing import SYSTEM, approval_record
from colony.kernel.consequences import ConsequenceMemory
from colony.kernel.gate import GateOutcome
from colony.kernel.models import (
    Approval,
    ApprovalState,
    ConsequenceKind,
    ConsequenceRecord,
    FalsificationReport,
    ProposeActionRequest,
    Reporter,
    SignalSource,
    SignalType,
    reviewer_label,
)
from colony.kernel.pheromones import Deposit, PheromoneStore
from colony.kernel.prepared import Prepared
from colony.kernel.roles import RoleAdapter
from colony.kernel.store import tables

__all__ = ["DECIDE_PENDING", "Approvals", "arguments_digest"]

_A = tables.approvals
_IS_PENDING = _A.c.state == literal_column("'pending'")
_INSERT = Prepared(insert(_A))
_DECIDE = Prepared(
    update(_A)
    .where(_A.c.approval_id == bindparam("approval"))
    .where(_IS_PENDING)
    .where(_A.c.expires_at > bindparam("now"))
    .values(
        state=bindparam("state"),
        reviewer=bindparam("reviewer"),
        reviewer_display_name=bindparam("display_name"),
        note=bindparam("note"),
        decided_at=bindparam("now"),
    )
    .returning(*_A.c)
)
_EXPIRE = Prepared(
    update(_A)
    .where(_IS_PENDING)
    .where(_A.c.expires_at <= bindparam("now"))
    .values(state=literal_column("'expired'"), decided_at=bindparam("now"))
    .returning(*_A.c)
)
_CLAIM = Prepared(
    update(_A)
    .where(_A.c.approval_id == bindparam("approval"))
    .where(_A.c.state == literal_column("'approved'"))
    .where(_A.c.executed_at.is_(None))
    .where(_A.c.agent_id == bindparam("agent"))
    .where(_A.c.tool == bindparam("tool"))
    .where(_A.c.target == bindparam("target"))
    .where(_A.c.action == bindparam("action"))
    .where(_A.c.arguments_digest == bindparam("digest"))
    .values(executed_at=bindparam("now"))
    .returning(*_A.c)
)
_GET = Prepared(select(_A).where(_A.c.approval_id == bindparam("approval")))
# At most ``cap`` rows are counted, so an agent's long history costs the check nothing more.
_WAITING = Prepared(
    select(func.count().label("waiting")).select_from(
        select(_A.c.approval_id)
        .where(_A.c.agent_id == bindparam("agent"))
        .where(_IS_PENDING)
        .where(_A.c.expires_at > bindparam("now"))
        .limit(bindparam("cap"))
        .subquery()
    )
)
LIST_LIMIT = 500
#: What an agent refused for its backlog of requests must do first: wait for people to decide them.
DECIDE_PENDING = "decide_pending_approvals"
MAX_SHOWN_ARGUMENTS = 16_384
REDACTED = "[redacted]"


def _names(value: Any) -> list[str]:
    """The secret argument names the runtime declared (anything else declares none)."""
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def arguments_digest(arguments: Any) -> str:
    """sha256 of ``arguments`` as canonical JSON (sorted keys, no spaces): what an approval is bound to."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def shown_arguments(arguments: Any, secret: Sequence[str]) -> str:
    """``arguments`` as a reviewer reads them: JSON, the ``secret`` ones redacted, cut at MAX_SHOWN_ARGUMENTS.

    Only the digest binds an approval; this text is what a person judges, so a secret never
    reaches it and a huge argument cannot flood the record.
    """
    if isinstance(arguments, dict):
        arguments = {key: REDACTED if key in secret else value for key, value in arguments.items()}
    text = json.dumps(arguments, sort_keys=True, indent=1, ensure_ascii=False, default=str)
    if len(text) <= MAX_SHOWN_ARGUMENTS:
        return text
    marker = f"\n... [cut: {len(text) - MAX_SHOWN_ARGUMENTS + 100} more characters; the digest binds them all]"
    return text[: MAX_SHOWN_ARGUMENTS - 100] + marker


def to_approval(row: dict[str, Any]) -> Approval:
    """A stored row as the model reviewers read."""
    fields = {name: row[name] for name in Approval.model_fields}
    fields["findings"] = json.loads(row["findings"])
    fields["required_evidence"] = json.loads(row["required_evidence"])
    return Approval.model_validate(fields)


class Approvals:
    """Open, decide, expire and claim approval requests; every method works inside a caller's transaction."""

    def __init__(self, roles: RoleAdapter, pheromones: PheromoneStore, ttl_seconds: float, max_pending: int) -> None:
        self.roles = roles
        self.pheromones = pheromones
        self.ttl_seconds = ttl_seconds
        self.max_pending = max_pending

    def full(self, connection: Connection, agent_id: str, now: float) -> str | None:
        """Why ``agent_id`` may not open another request (it has ``max_pending`` waiting), else None.

        A held call costs a person's attention, and an agent that files them faster than people
        decide would bury every other agent's requests and grow the table without bound. The
        count is read in the proposing transaction: calls in flight together may pass it by as
        many as run at once, which the agent's concurrency limit bounds.
        """
        [row] = _WAITING.all(connection, {"agent": agent_id, "now": now, "cap": self.max_pending})
        if row["waiting"] < self.max_pending:
            return None
        return (
            f"agent {agent_id} already has {self.max_pending} approval requests waiting for a person "
            "(max_pending_approvals); a held call is refused until some are decided or expire"
        )

    def open(
        self,
        connection: Connection,
        proposal_id: str,
        request: ProposeActionRequest,
        outcome: GateOutcome,
        report: FalsificationReport,
        estimate: dict[str, float],
        now: float,
    ) -> Approval:
        """Store a pending request for the held proposal ``proposal_id``."""
        evidence = request.evidence_dict()
        findings = [
            {
                "attack_vector": finding.attack_vector.value,
                "severity": finding.severity.value,
                "claim": finding.claim,
                "remediation": finding.remediation,
            }
            for finding in report.findings
        ]
        # Which arguments are secret only the call pipeline says (from the tool's schema, with `tool` set):
        # in an agent's own proposal the list is its text, and would hide from the reviewer what it wrote.
        secret = _names(evidence.get("secret_arguments")) if request.tool is not None else []
        row = {
            "approval_id": str(uuid.uuid4()),
            "proposal_id": proposal_id,
            "agent_id": request.agent_id,
            "tool": request.tool or request.target,
            "action": request.action_type,
            "target": request.target,
            "arguments_digest": arguments_digest(evidence.get("arguments", {})),
            "arguments": shown_arguments(evidence.get("arguments", {}), secret),
            "gate_score": outcome.gate_score,
            "findings": json.dumps(findings),
            "required_evidence": json.dumps(outcome.required_evidence),
            "reason": outcome.reason,
            "estimate_llm_calls": estimate["llm_calls"],
            "estimate_runtime_seconds": estimate["runtime_seconds"],
            "requested_at": now,
            "expires_at": now + self.ttl_seconds,
            "state": ApprovalState.PENDING.value,
            "reviewer": None,
            "reviewer_display_name": None,
            "note": None,
            "decided_at": None,
            "executed_at": None,
            "flow_run_id": None,
        }
        _INSERT.send(connection, row)
        return to_approval(row)

    @staticmethod
    def get(connection: Connection, approval_id: str) -> dict[str, Any] | None:
        """The stored row, or None."""
        rows = _GET.all(connection, {"approval": approval_id})
        return rows[0] if rows else None

    @staticmethod
    def list(connection: Connection, state: ApprovalState | None, agent_id: str | None) -> list[Approval]:
        """Requests (at most LIST_LIMIT), filtered by state and agent: agents in turn, then newest first.

        Each agent's newest request comes before any agent's second (its pending requests
        oldest first: the ones that expire soonest), so one agent's flood of held calls cannot
        push another agent's request off the page a reviewer reads, and see it expire unread.
        """
        pending = state is ApprovalState.PENDING
        within = _A.c.requested_at.asc() if pending else _A.c.requested_at.desc()
        turn = func.row_number().over(partition_by=_A.c.agent_id, order_by=(within, _A.c.approval_id)).label("turn")
        ranked = select(_A, turn)
        if state is not None:
            ranked = ranked.where(_A.c.state == state.value)
        if agent_id is not None:
            ranked = ranked.where(_A.c.agent_id == agent_id)
        page = ranked.subquery()
        order = page.c.requested_at.asc() if pending else page.c.requested_at.desc()
        query = select(*(page.c[column.name] for column in _A.c)).order_by(page.c.turn, order, page.c.approval_id)
        return [to_approval(dict(row._mapping)) for row in connection.execute(query.limit(LIST_LIMIT))]

    @staticmethod
    def decide(
        connection: Connection,
        approval_id: str,
        state: ApprovalState,
        reviewer: str | None,
        note: str,
        now: float,
        display_name: str | None = None,
    ) -> dict[str, Any] | None:
        """Move a pending, unexpired request to ``state``; its row, or None when it was not pending (or overdue)."""
        values = {
            "approval": approval_id,
            "state": state.value,
            "reviewer": reviewer,
            "display_name": display_name,
            "note": note,
            "now": now,
        }
        rows = _DECIDE.all(connection, values)
        return rows[0] if rows else None

    @staticmethod
    def claim(connection: Connection, approval_id: str, call: dict[str, str], now: float) -> dict[str, Any] | None:
        """Mark an approved request executed, if it matches ``call`` and was not claimed before; its row, or None.

        ``call`` names the claiming call's ``agent_id``, ``tool``, ``target``, ``action`` and ``arguments``
        (their digest).
        """
        values = {
            "approval": approval_id,
            "agent": call["agent_id"],
            "tool": call["tool"],
            "target": call["target"],
            "action": call["action"],
            "digest": call["arguments"],
            "now": now,
        }
        rows = _CLAIM.all(connection, values)
        return rows[0] if rows else None

    def expire_due(self, connection: Connection, now: float) -> Sequence[dict[str, Any]]:
        """Expire every pending request past its expiry, recording each refusal; the expired rows.

        The caller appends their audit entries (:meth:`audit_expired`) last in its transaction.
        """
        lapsed = _EXPIRE.all(connection, {"now": now})
        # Agents are locked in one order (by id) so concurrent sweeps never cross.
        lapsed.sort(key=lambda row: (row["agent_id"], row["expires_at"], row["approval_id"]))
        for row in lapsed:
            self.record_refusal(connection, row, now)
        return lapsed

    @staticmethod
    def audit_expired(connection: Connection, rows: Sequence[dict[str, Any]], now: float, who: str = SYSTEM) -> None:
        """Append an ``expire`` entry for each expired request (locks the audit head: call it last)."""
        AuditLog.append(connection, [approval_record("expire", row, who, note=row["note"]) for row in rows], now)

    def record_refusal(self, connection: Connection, row: dict[str, Any], now: float) -> None:
        """A rejected or expired request's consequence: trust, counters, history and a FAILURE trace."""
        rejected = row["state"] == ApprovalState.REJECTED.value
        feedback = -1.0 if rejected else 0.0
        before, after = self.roles.apply_outcome(connection, row["agent_id"], False, feedback, now)
        if rejected:
            who = reviewer_label(row["reviewer"], row["reviewer_display_name"])
            what = f"not run: held, and rejected by {who}: {row['note'] or 'no note'}"
        else:
            what = f"not run: held, and nobody decided in time (approval {row['approval_id']} expired)"
        ConsequenceMemory.store(
            connection,
            ConsequenceRecord(
                consequence_id=str(uuid.uuid4()),
                proposal_id=row["proposal_id"],
                agent_id=row["agent_id"],
                action_type=row["action"],
                target=row["target"],
                actual_outcome=f"{row['tool']}.{row['action']}: {what}",
                tests_passed=False,
                human_feedback=feedback,
                trust_before=before.trust,
                trust_after=after.trust,
                recorded_at=now,
                kind=ConsequenceKind.REJECTION if rejected else ConsequenceKind.EXPIRY,
                reported_by=Reporter.PERSON if rejected else Reporter.RUNTIME,
            ),
        )
        evidence = {"approval_id": row["approval_id"], "proposal_id": row["proposal_id"], "state": row["state"]}
        source = SignalSource.HUMAN if rejected else SignalSource.RUNTIME
        deposit = Deposit(row["target"], SignalType.FAILURE, source=source, evidence=evidence)
        self.pheromones.deposit(connection, deposit, now=now)
