"""The kernel's approval operations: decide, claim, read and expire approval requests, one transaction each.

A mixin of :class:`~colony.kernel.kernel.ColonyKernel` (kept apart so each module stays
small); the rules live in :mod:`colony.kernel.approvals`. An error decided inside a
transaction that must still commit (an expiry it recorded) is returned by the
transaction and raised after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection, select, update

from colony.errors import ApprovalError, KernelInputError, UnknownApprovalError
from colony.kernel.approvals import Approvals, to_approval
from colony.kernel.attestation import Attestor, Claims
from colony.kernel.audit import AuditLog
from colony.kernel.auditing import approval_record
from colony.kernel.checks import check_name, check_text
from colony.kernel.ledger import ResourceLedger
from colony.kernel.models import Approval, ApprovalClaim, ApprovalState, AttestationMode, reviewer_label
from colony.kernel.proposals import open_reservation
from colony.kernel.settings import KernelSettings
from colony.kernel.shares import AgentShares
from colony.kernel.store import Store, tables

__all__ = ["ApprovalOperations"]

T = TypeVar("T")
MAX_NOTE = 10_000


class ApprovalOperations:
    """Approve, reject, expire, claim, get and list approval requests (needs the kernel's parts below)."""

    settings: KernelSettings
    store: Store
    clock: Callable[[], float]
    ledger: ResourceLedger
    attestor: Attestor
    approvals: Approvals
    shares: AgentShares

    def approve(self, approval_id: str, reviewer: str, note: str = "", *, display_name: str | None = None) -> Approval:
        """Approve a pending request: reserve its budget and issue its proposal's one-time authorization.

        ``reviewer`` is the authenticated principal that decides (every record names it);
        ``display_name``, a name it gives itself, is only shown beside it.

        Raises:
            UnknownApprovalError: No request has that id.
            ApprovalError: It was already decided, it expired (it is recorded as expired), or the
                budget cannot carry it now (it stays pending).
        """
        approval_id, reviewer, note = self._decision_input(approval_id, reviewer, note)
        display_name = self._display_name(display_name)
        now = self.clock()

        def work(connection: Connection) -> Approval | ApprovalError:
            row = self.approvals.decide(
                connection, approval_id, ApprovalState.APPROVED, reviewer, note, now, display_name
            )
            if row is None:
                return self._undecidable(connection, approval_id, now)
            estimate = {"llm_calls": row["estimate_llm_calls"], "runtime_seconds": row["estimate_runtime_seconds"]}
            claims = None
            if self.settings.attestation is not AttestationMode.OFF:
                claims = self.attestor.issue(row["proposal_id"], row["agent_id"], row["action"], row["target"], now)
            # Rows in the kernel's one order: proposals before the budget (reserved last, held until the commit).
            period = self.ledger.period(now)
            expires_at = now + self.settings.attestation_ttl_seconds
            open_reservation(connection, row["proposal_id"], period, estimate, claims, expires_at)
            self.shares.add(connection, row["agent_id"], estimate)  # a person approved it: over any share
            if self.ledger.reserve(connection, estimate, now) is None:
                raise ApprovalError(
                    f"approval {approval_id}: the budget cannot carry the held call now "
                    f"({estimate}); it stays pending: approve it after the budget period rolls over",
                    approval_id=approval_id,
                    state=ApprovalState.PENDING.value,
                )
            record = approval_record("approve", row, reviewer, display_name=display_name, note=note)
            AuditLog.append(connection, [record], now)
            return to_approval(row)

        return self._raise_or_return(self.store.run(work))

    def reject(self, approval_id: str, reviewer: str, note: str = "", *, display_name: str | None = None) -> Approval:
        """Reject a pending request and record the refusal (trust, counters, history, a FAILURE trace).

        ``reviewer`` is the authenticated principal that decides (every record names it);
        ``display_name``, a name it gives itself, is only shown beside it.

        Raises:
            UnknownApprovalError: No request has that id.
            ApprovalError: It was already decided, or it expired (it is recorded as expired).
        """
        approval_id, reviewer, note = self._decision_input(approval_id, reviewer, note)
        display_name = self._display_name(display_name)
        now = self.clock()

        def work(connection: Connection) -> Approval | ApprovalError:
            row = self.approvals.decide(
                connection, approval_id, ApprovalState.REJECTED, reviewer, note, now, display_name
            )
            if row is None:
                return self._undecidable(connection, approval_id, now)
            self.approvals.record_refusal(connection, row, now)
            record = approval_record("reject", row, reviewer, display_name=display_name, note=note)
            AuditLog.append(connection, [record], now)
            return to_approval(row)

        return self._raise_or_return(self.store.run(work))

    def expire_approval(self, approval_id: str, note: str = "nobody decided in time") -> Approval:
        """Expire a pending request now (the process that waited gave up) and record the refusal.

        Raises:
            UnknownApprovalError: No request has that id.
            ApprovalError: It was already decided (or expired).
        """
        approval_id, _, note = self._decision_input(approval_id, "colony", note)
        now = self.clock()

        def work(connection: Connection) -> Approval | ApprovalError:
            row = self.approvals.decide(connection, approval_id, ApprovalState.EXPIRED, None, note, now)
            if row is None:
                return self._undecidable(connection, approval_id, now)
            self.approvals.record_refusal(connection, row, now)
            self.approvals.audit_expired(connection, [row], now)
            return to_approval(row)

        return self._raise_or_return(self.store.run(work))

    def claim_approval(
        self, approval_id: str, *, agent_id: str, tool: str, target: str, action: str, arguments_digest: str
    ) -> ApprovalClaim:
        """Hand an approved request's authorization to the call it approved: once, and only if it matches.

        ``target`` is the target the call is judged on (a tool call's: its tool id), so the approval
        of a plan an agent proposed itself, naming the tool, is never claimed by a call of that tool.

        Raises:
            UnknownApprovalError: No request has that id.
            ApprovalError: It is not approved, was already executed, names another agent, tool,
                target, action or arguments, or its authorization lapsed.
        """
        approval_id = check_name(approval_id, "approval_id", 64)
        call = {
            "agent_id": check_name(agent_id, "agent_id", 256),
            "tool": tool,
            "target": target,
            "action": action,
            "arguments": arguments_digest,
        }
        now = self.clock()

        def work(connection: Connection) -> ApprovalClaim | ApprovalError:
            row = self.approvals.claim(connection, approval_id, call, now)
            if row is None:
                return self._unclaimable(connection, approval_id, call)
            proposal = connection.execute(
                select(tables.proposals).where(tables.proposals.c.proposal_id == row["proposal_id"])
            ).one()
            if proposal.reservation != "open" or proposal.expires_at <= now:
                raise ApprovalError(
                    f"approval {approval_id}: its authorization lapsed (the approved call was not run before "
                    f"{proposal.expires_at:.0f}); ask again",
                    approval_id=approval_id,
                    state=row["state"],
                )
            token = None
            if proposal.token_nonce is not None:
                claims = Claims(
                    row["proposal_id"],
                    row["agent_id"],
                    row["action"],
                    row["target"],
                    proposal.expires_at,
                    proposal.token_nonce,
                )
                token = self.attestor.sign(claims)
            AuditLog.append(connection, [approval_record("claim", row, call["agent_id"])], now)
            return ApprovalClaim(approval=to_approval(row), authorization=token)

        return self._raise_or_return(self.store.run(work))

    def get_approval(self, approval_id: str) -> Approval:
        """One request (an overdue pending one is expired first, so what is read is true now)."""
        approval_id = check_name(approval_id, "approval_id", 64)
        now = self.clock()
        row = self.store.run(lambda connection: self.approvals.get(connection, approval_id), write=False)
        if row is None:
            raise UnknownApprovalError(approval_id)
        if row["state"] == ApprovalState.PENDING.value and row["expires_at"] <= now:
            row = self.store.run(lambda connection: self._expired_then_get(connection, approval_id, now))
        return to_approval(row)

    def list_approvals(
        self, *, state: ApprovalState | str | None = None, agent_id: str | None = None
    ) -> list[Approval]:
        """Requests newest first (at most 500), optionally one state's or one agent's; overdue ones expired first."""
        wanted = self._state(state)
        if agent_id is not None:
            agent_id = check_name(agent_id, "agent_id", 256)
        now = self.clock()

        def read(connection: Connection) -> list[Approval]:
            return self.approvals.list(connection, wanted, agent_id)

        found = self.store.run(read, write=False)
        if any(a.state is ApprovalState.PENDING and a.expires_at <= now for a in found):
            self.store.run(lambda connection: self._expire_due(connection, now))
            found = self.store.run(read, write=False)
        return found

    def attach_flow_run(self, approval_id: str, flow_run_id: str) -> Approval:
        """Note the Prefect flow run that waits on a request (so a decision elsewhere can resume it)."""
        approval_id = check_name(approval_id, "approval_id", 64)
        flow_run_id = check_name(flow_run_id, "flow_run_id", 64)

        def work(connection: Connection) -> dict[str, Any] | None:
            connection.execute(
                update(tables.approvals)
                .where(tables.approvals.c.approval_id == approval_id)
                .values(flow_run_id=flow_run_id)
            )
            return self.approvals.get(connection, approval_id)

        row = self.store.run(work)
        if row is None:
            raise UnknownApprovalError(approval_id)
        return to_approval(row)

    @staticmethod
    def _decision_input(approval_id: Any, reviewer: Any, note: Any) -> tuple[str, str, str]:
        approval_id = check_name(approval_id, "approval_id", 64)
        reviewer = check_name(reviewer, "reviewer", 256)
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            raise KernelInputError.for_field(
                "note", f"{type(note).__name__} given", expected=f"text of at most {MAX_NOTE}"
            )
        return approval_id, reviewer, check_text(note, "note")

    @staticmethod
    def _display_name(display_name: Any) -> str | None:
        return None if display_name is None or display_name == "" else check_name(display_name, "display_name", 256)

    @staticmethod
    def _state(state: ApprovalState | str | None) -> ApprovalState | None:
        if state is None:
            return None
        try:
            return ApprovalState(state)
        except ValueError:
            known = "|".join(s.value for s in ApprovalState)
            raise KernelInputError.for_field("state", f"unknown approval state {state!r}", expected=known) from None

    @staticmethod
    def _raise_or_return(result: T | ApprovalError) -> T:
        """Errors decided inside a transaction that must still commit (an expiry it recorded) are raised here."""
        if isinstance(result, ApprovalError):
            raise result
        return result

    def _expire_due(self, connection: Connection, now: float) -> None:
        self.approvals.audit_expired(connection, self.approvals.expire_due(connection, now), now)

    def _expired_then_get(self, connection: Connection, approval_id: str, now: float) -> dict[str, Any]:
        self._expire_due(connection, now)
        row = self.approvals.get(connection, approval_id)
        assert row is not None
        return row

    def _undecidable(self, connection: Connection, approval_id: str, now: float) -> ApprovalError:
        """Why a request could not be decided; an overdue pending one is expired (and recorded) now."""
        row = self.approvals.get(connection, approval_id)
        if row is None:
            return UnknownApprovalError(approval_id)
        if row["state"] == ApprovalState.PENDING.value:
            self._expire_due(connection, now)
            return ApprovalError(
                f"approval {approval_id} expired at {row['expires_at']:.0f}: it can no longer be decided "
                "(its refusal is recorded)",
                approval_id=approval_id,
                state=ApprovalState.EXPIRED.value,
            )
        who = reviewer_label(row["reviewer"], row["reviewer_display_name"])
        by = f" by {who}" if who else ""
        return ApprovalError(
            f"approval {approval_id} was already {row['state']}{by}: it is decided once",
            approval_id=approval_id,
            state=row["state"],
        )

    def _unclaimable(self, connection: Connection, approval_id: str, call: dict[str, str]) -> ApprovalError:
        row = self.approvals.get(connection, approval_id)
        if row is None:
            return UnknownApprovalError(approval_id)
        state = row["state"]
        for name, given in call.items():
            stored = row["arguments_digest" if name == "arguments" else name]
            if stored != given:
                return ApprovalError(
                    f"approval {approval_id} does not cover this call: its {name} differs from the approved one",
                    approval_id=approval_id,
                    state=state,
                )
        if state == ApprovalState.APPROVED.value:
            return ApprovalError(
                f"approval {approval_id} was already executed once: an approval runs its call once",
                approval_id=approval_id,
                state=state,
            )
        return ApprovalError(f"approval {approval_id} is {state}, not approved", approval_id=approval_id, state=state)
