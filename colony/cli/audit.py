"""``colony audit``: list the kernel's audit log for a person, export it as JSON lines, verify its hash chain.

``verify`` prints the head hash: kept outside the database (a ticket, a log shipper, a
second machine), it lets a later ``verify --head HASH`` see a tail that was cut off
together with the head row, which the chain alone cannot show.
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TextIO

import typer
from rich.markup import escape
from rich.table import Column, Table

from colony.cli.failures import ColonyTyper, JsonFlag, fail
from colony.cli.kernel import _kernel
from colony.cli.output import cli_console
from colony.errors import KernelInputError
from colony.kernel import AuditEntry
from colony.kernel.audit_query import MAX_LIMIT

audit_app = ColonyTyper(no_args_is_help=True, help="The kernel's tamper-evident record of decisions.")


def _since(value: str) -> tuple[int, float | None]:
    """``--since``: a seq (digits) or an ISO 8601 time (naive means UTC) -> (since_seq, since_at)."""
    text = value.strip()
    if text.isdigit():
        return max(1, int(text)), None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise KernelInputError.for_field(
            "since",
            f"{value!r} is neither a seq (e.g. 42) nor an ISO 8601 time (e.g. 2026-12-01T09:00:00Z)",
            expected="a seq or an ISO 8601 time",
        ) from None
    # An ISO time has microseconds; an entry's time is a float rounded to them when shown. A
    # microsecond of slack keeps `--since` an entry's own `at` including that entry.
    return 1, (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp() - 1e-6


_AGE = re.compile(r"(\d{1,9})([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_ISO, _AGES = "an ISO 8601 time (e.g. 2026-12-01T09:00:00Z)", "an age (e.g. 90m, 24h, 7d)"


def _time(value: str | None, field: str) -> float | None:
    """``--since``/``--until``: an ISO 8601 time (naive means UTC) or an age before now -> Unix time."""
    if value is None:
        return None
    text = value.strip()
    if age := _AGE.fullmatch(text):
        return time.time() - int(age[1]) * _SECONDS[age[2]]
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise KernelInputError.for_field(
            field, f"{value!r} is neither {_ISO} nor {_AGES}", expected=f"{_ISO} or {_AGES}"
        ) from None
    return (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp()


def _table(entries: list[AuditEntry], limit: int) -> Table:
    """One row per entry; every column folds rather than cut a value short on a narrow terminal."""
    more = f"the newest {limit} that match: --limit or --since/--until for others" if len(entries) == limit else None
    table = Table(
        Column("seq", justify="right", no_wrap=True),
        Column("at (UTC)", no_wrap=True),
        *(Column(name, overflow="fold") for name in ("event", "verdict", "who", "for", "tool", "what")),
        title="audit log, newest first",
        caption=more,
    )
    for entry in entries:
        at = datetime.fromtimestamp(entry.at_unix, UTC).strftime("%Y-%m-%d %H:%M:%S")
        tool = entry.detail.get("tool")
        cells = (entry.event, entry.verdict, entry.who, entry.on_behalf, tool if isinstance(tool, str) else "-")
        table.add_row(str(entry.seq), at, *(escape(cell) for cell in (*cells, entry.what)))
    return table


@audit_app.command("list")
def list_entries(
    who: Annotated[
        str | None, typer.Option("--who", help="Only decisions by this principal (its agent id; colony, anonymous).")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only decisions about this agent (on_behalf).")] = None,
    event: Annotated[
        str | None, typer.Option("--event", help="Only this event: propose, approve, reject, claim, expire, refused.")
    ] = None,
    verdict: Annotated[
        str | None,
        typer.Option("--verdict", help="Only this verdict: execute, hold, refuse, approved, rejected, forbidden, ..."),
    ] = None,
    tool: Annotated[
        str | None, typer.Option("--tool", help="Only decisions on this tool's calls, and calls to it refused.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Entries at or after: an ISO 8601 time, or an age (90m, 24h, 7d).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Entries at or before: an ISO 8601 time, or an age (90m, 24h, 7d).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=MAX_LIMIT, help="At most this many entries.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """List audit entries newest first, filtered, as a table (or JSON); export and verify read the whole log."""
    since_at, until_at = _time(since, "since"), _time(until, "until")
    # An ISO time has microseconds; an entry's time is a float rounded to them when shown: a
    # microsecond of slack keeps an entry's own shown time including that entry.
    entries = _kernel().audit_list(
        who=who,
        on_behalf=agent,
        event=event,
        verdict=verdict,
        tool=tool,
        since_at=None if since_at is None else since_at - 1e-6,
        until_at=None if until_at is None else until_at + 1e-6,
        limit=limit,
    )
    if as_json:
        typer.echo(json.dumps([entry.model_dump(mode="json") for entry in entries], indent=2))
    elif not entries:
        typer.echo("no audit entries match", err=True)
    else:
        cli_console().print(_table(entries, limit))


@audit_app.command("export")
def export(
    since: Annotated[
        str, typer.Option("--since", help="A seq (from that entry on) or an ISO 8601 time (entries at or after it).")
    ] = "1",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (default: standard output).")
    ] = None,
) -> None:
    """Write the audit log's entries as JSON lines, oldest first; the head hash goes to standard error."""
    try:
        since_seq, since_at = _since(since)
        kernel = _kernel()
        stream: TextIO = output.open("w", encoding="utf-8") if output is not None else sys.stdout
        count, last = 0, None
        try:
            for entry in kernel.audit_entries(since_seq=since_seq, since_at=since_at):
                stream.write(entry.model_dump_json() + "\n")
                count, last = count + 1, entry
        finally:
            if output is not None:
                stream.close()
    except OSError as error:
        raise fail(f"cannot write {output}: {error.strerror}") from None
    where = f" to {output}" if output is not None else ""
    head = f"; last entry {last.seq}, hash {last.hash}" if last is not None else ""
    typer.echo(f"exported {count} entries{where}{head}", err=True)


@audit_app.command("verify")
def verify(
    head: Annotated[
        str | None,
        typer.Option("--head", help="A head hash kept from an earlier verify or export: it must still be in the log."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check every entry's hash and link, and the head; exit 1 naming the first entry changed, inserted or removed."""
    check = _kernel().verify_audit(head)
    if as_json:
        typer.echo(check.model_dump_json())
    elif check.ok:
        typer.echo(f"ok: {check.count} entries verify; head {check.head_seq} {check.head_hash}")
    else:
        typer.echo(f"FAILED: {check.problem}", err=True)
        typer.echo(f"(entries up to {check.head_seq} verify; their head is {check.head_hash})", err=True)
    if not check.ok:
        raise typer.Exit(code=1)
