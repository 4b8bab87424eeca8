"""Finding audit entries for a person: newest first, by who, for whom, event, verdict, tool and time.

``tool`` is not a column. A decision on a call names it in ``detail``, stored as canonical
JSON, so a LIKE on ``"tool":<name as JSON>`` narrows the rows in SQL (a quote inside a JSON
string is escaped, so no string value matches it) and each candidate's parsed detail
decides; a refused call names it in ``what`` (``call <tool>[.<action>]``, ``route <tool>``).
Rows are read a page at a time from the newest, so a rare match costs a scan, never a large read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, or_, select

from colony.errors import KernelInputError
from colony.kernel.audit import BATCH
from colony.kernel.checks import check_name
from colony.kernel.store import tables

__all__ = ["EVENTS", "MAX_LIMIT", "VERDICTS", "AuditQuery"]

_L = tables.audit_log
EVENTS = ("propose", "approve", "reject", "claim", "expire", "refused")
VERDICTS = (
    *("execute", "hold", "refuse"),  # propose
    *("approved", "rejected", "claimed", "expired"),  # approve, reject, claim, expire
    *("unauthenticated", "forbidden", "rate_limited"),  # refused (another HTTP status is kept as its number)
)
MAX_LIMIT = 1000


def _one_of(value: str | None, field: str, allowed: tuple[str, ...], *, status: bool = False) -> str | None:
    if value is None or value in allowed or (status and value.isdigit() and len(value) == 3):
        return value
    raise KernelInputError.for_field(field, f"{value!r} is not one of {', '.join(allowed)}", expected=allowed[0])


def _refused_what(tool: str) -> tuple[tuple[str, str], str]:
    """How a refused call's ``what`` names ``tool``: whole, or before an action."""
    return (f"call {tool}", f"route {tool}"), f"call {tool}."


@dataclass(frozen=True)
class AuditQuery:
    """Which entries to list: every filter given must hold; times are Unix seconds, both ends included."""

    who: str | None = None
    on_behalf: str | None = None
    event: str | None = None
    verdict: str | None = None
    tool: str | None = None
    since_at: float | None = None
    until_at: float | None = None
    limit: int = 50

    def checked(self) -> AuditQuery:
        """This query, or KernelInputError naming the filter that cannot match anything as given."""
        for name in ("who", "on_behalf", "tool"):
            if getattr(self, name) is not None:
                check_name(getattr(self, name), name, 256)
        _one_of(self.event, "event", EVENTS)
        _one_of(self.verdict, "verdict", VERDICTS, status=True)
        for name in ("since_at", "until_at"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise KernelInputError.for_field(name, f"{value!r} is not a finite time", expected="a finite time")
        if self.since_at is not None and self.until_at is not None and self.since_at > self.until_at:
            raise KernelInputError.for_field("since", "is after until: no entry can match", expected="since <= until")
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not 1 <= self.limit <= MAX_LIMIT:
            raise KernelInputError.for_field(
                "limit", f"{self.limit!r} is not from 1 to {MAX_LIMIT}", expected=f"1 to {MAX_LIMIT}"
            )
        return self

    def _where(self) -> list[ColumnElement[bool]]:
        columns = ((_L.c.who, self.who), (_L.c.on_behalf, self.on_behalf), (_L.c.event, self.event))
        where = [column == value for column, value in (*columns, (_L.c.verdict, self.verdict)) if value is not None]
        if self.since_at is not None:
            where.append(_L.c.at >= self.since_at)
        if self.until_at is not None:
            where.append(_L.c.at <= self.until_at)
        if self.tool is not None:
            key = '"tool":' + json.dumps(self.tool, ensure_ascii=False)
            exact, prefix = _refused_what(self.tool)
            refused = or_(_L.c.what.in_(exact), _L.c.what.startswith(prefix, autoescape=True))
            where.append(or_(_L.c.detail.contains(key, autoescape=True), and_(_L.c.event == "refused", refused)))
        return where

    def page(self, connection: Connection, before_seq: int | None) -> list[dict[str, Any]]:
        """Up to ``BATCH`` candidate rows before ``before_seq`` (None: from the newest), newest first."""
        query = select(_L).where(*self._where()).order_by(_L.c.seq.desc()).limit(BATCH)
        if before_seq is not None:
            query = query.where(_L.c.seq < before_seq)
        return [dict(row._mapping) for row in connection.execute(query)]

    def matches(self, row: dict[str, Any]) -> bool:
        """Whether a candidate row holds: the tool named in its detail or its refusal (the LIKE only narrowed)."""
        if self.tool is None or json.loads(row["detail"]).get("tool") == self.tool:
            return True
        exact, prefix = _refused_what(self.tool)
        return row["event"] == "refused" and (row["what"] in exact or row["what"].startswith(prefix))
