"""The kernel's audit operations, and the entries its decisions append (the log itself: ``audit.py``).

A mixin of :class:`~colony.kernel.kernel.ColonyKernel`: refused calls are appended
here (a surface's refusal changes no state, so it has a transaction of its own); the
gate, approval and expiry entries are built by the functions below and appended by
the operation that decides, in its own transaction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from colony.errors import KernelInputError
from colony.kernel.audit import BATCH, AuditCheck, AuditEntry, AuditLog, AuditRecord, to_entry
from colony.kernel.audit_query import AuditQuery
from colony.kernel.checks import check_name, check_text
from colony.kernel.gate import GateOutcome
from colony.kernel.models import ProposeActionRequest
from colony.kernel.store import Store

__all__ = ["SYSTEM", "AuditOperations", "approval_record", "gate_record", "refusal_record"]

SYSTEM = "colony"  # who expires a request nobody decided
_MAX_DETAIL = 4096


def gate_record(
    request: ProposeActionRequest,
    outcome: GateOutcome,
    proposal_id: str,
    budget_approved: bool,
    approval_id: str | None,
) -> AuditRecord:
    """A propose decision: EXECUTE, HOLD or REFUSE, and why."""
    detail: dict[str, Any] = {
        "proposal_id": proposal_id,
        "gate_score": outcome.gate_score,
        "reason": outcome.reason,
        "required_evidence": list(outcome.required_evidence),
        "budget_approved": budget_approved,
    }
    if approval_id is not None:
        detail["approval_id"] = approval_id
    if request.tool is not None:
        detail["tool"] = request.tool
    if request.policy is not None:  # what the operators' policies decided before the gate (the pipeline's word)
        detail["policy"] = request.policy
    return AuditRecord(
        event="propose",
        who=request.acted_by or request.agent_id,
        on_behalf=request.agent_id,
        what=f"{request.action_type} {request.target}",
        verdict=outcome.decision.value,
        detail=detail,
    )


def approval_record(event: str, row: dict[str, Any], who: str, **detail: Any) -> AuditRecord:
    """An approval's decision (approve, reject, expire) or its claim by the call it approved."""
    return AuditRecord(
        event=event,
        who=who,
        on_behalf=row["agent_id"],
        what=f"approval {row['approval_id']}: {row['action']} {row['target']}",
        verdict=row["state"] if event != "claim" else "claimed",
        detail={"approval_id": row["approval_id"], "proposal_id": row["proposal_id"], "tool": row["tool"]} | detail,
    )


def refusal_record(who: str, on_behalf: str | None, what: str, status: int, error: str, **detail: Any) -> AuditRecord:
    """A call refused before any decision: unauthenticated (401), forbidden (403), over its limits (429)."""
    return AuditRecord(
        event="refused",
        who=who,
        on_behalf=on_behalf or who,
        what=what,
        verdict={401: "unauthenticated", 403: "forbidden", 429: "rate_limited"}.get(status, str(status)),
        detail={"status": status, "error": error[:_MAX_DETAIL]} | detail,
    )


class AuditOperations:
    """Record refusals, export, list and verify the audit log (needs the kernel's store and clock)."""

    store: Store
    clock: Callable[[], float]

    def record_refusals(self, records: Sequence[AuditRecord]) -> int:
        """Append refused calls (surfaces coalesce a burst into one record with a count); how many were written."""
        checked = [_checked(record) for record in records]
        now = self.clock()
        return self.store.run(lambda connection: AuditLog.append(connection, checked, now))

    def audit_entries(self, *, since_seq: int = 1, since_at: float | None = None) -> Iterator[AuditEntry]:
        """Entries from seq ``since_seq`` on (and at or after Unix time ``since_at``), oldest first.

        Read in batches of one transaction each, so an export of any size holds no lock long.
        """
        if isinstance(since_seq, bool) or not isinstance(since_seq, int) or since_seq < 1:
            raise KernelInputError.for_field(
                "since", f"{since_seq!r} is not a seq of 1 or more", expected="a seq of 1 or more"
            )
        if since_at is not None and not math.isfinite(since_at):
            raise KernelInputError.for_field("since", f"{since_at!r} is not a finite time", expected="a finite time")
        after = since_seq - 1
        while True:
            rows = self.store.run(partial(AuditLog.page, after_seq=after, since_at=since_at), write=False)
            yield from (to_entry(row) for row in rows)
            if len(rows) < BATCH:
                return
            after = rows[-1]["seq"]

    def audit_list(
        self,
        *,
        who: str | None = None,
        on_behalf: str | None = None,
        event: str | None = None,
        verdict: str | None = None,
        tool: str | None = None,
        since_at: float | None = None,
        until_at: float | None = None,
        limit: int = 50,
    ) -> list[AuditEntry]:
        """Up to ``limit`` (at most 1000) entries matching every filter given, newest first.

        ``since_at`` and ``until_at`` are Unix times, both included. One read transaction per
        page of candidates, as for an export.
        """
        query = AuditQuery(who, on_behalf, event, verdict, tool, since_at, until_at, limit).checked()
        found: list[AuditEntry] = []
        before: int | None = None
        while len(found) < limit:
            rows = self.store.run(partial(query.page, before_seq=before), write=False)
            found += [to_entry(row) for row in rows if query.matches(row)]
            if len(rows) < BATCH:
                break
            before = rows[-1]["seq"]
        return found[:limit]

    def verify_audit(self, kept_head: str | None = None) -> AuditCheck:
        """Walk the whole log in one read transaction; ``kept_head``: a head hash kept from an earlier check."""
        if kept_head is not None:
            kept_head = kept_head.strip().lower()
            if len(kept_head) != 64 or any(c not in "0123456789abcdef" for c in kept_head):
                raise KernelInputError.for_field(
                    "head",
                    f"{kept_head!r} is not a sha256 hex digest (64 hex characters)",
                    expected="a sha256 hex digest",
                )
        return self.store.run(lambda connection: AuditLog.verify(connection, kept_head), write=False)


def _checked(record: AuditRecord) -> AuditRecord:
    """A surface's record with its names checked (no NUL, bounded length), so it stores on every database."""
    for name in ("who", "on_behalf", "event", "verdict"):
        check_name(getattr(record, name), name, 256)
    check_text(record.what, "what")
    return record
