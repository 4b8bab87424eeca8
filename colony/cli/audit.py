"""``colony audit``: export the kernel's audit log as JSON lines, and verify its hash chain.

``verify`` prints the head hash: kept outside the database (a ticket, a log shipper, a
second machine), it lets a later ``verify --head HASH`` see a tail that was cut off
together with the head row, which the chain alone cannot show.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TextIO

import typer

from colony.cli.kernel import JsonFlag, _fail, _kernel
from colony.errors import ColonyError, KernelInputError

audit_app = typer.Typer(no_args_is_help=True, help="The kernel's tamper-evident record of decisions.")


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
        kernel = _kernel(False)
        stream: TextIO = output.open("w", encoding="utf-8") if output is not None else sys.stdout
        count, last = 0, None
        try:
            for entry in kernel.audit_entries(since_seq=since_seq, since_at=since_at):
                stream.write(entry.model_dump_json() + "\n")
                count, last = count + 1, entry
        finally:
            if output is not None:
                stream.close()
    except ColonyError as error:
        raise _fail(error, False) from None
    except OSError as error:
        raise _fail(f"cannot write {output}: {error.strerror}", False) from None
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
    try:
        check = _kernel(as_json).verify_audit(head)
    except ColonyError as error:
        raise _fail(error, as_json) from None
    if as_json:
        typer.echo(check.model_dump_json())
    elif check.ok:
        typer.echo(f"ok: {check.count} entries verify; head {check.head_seq} {check.head_hash}")
    else:
        typer.echo(f"FAILED: {check.problem}", err=True)
        typer.echo(f"(entries up to {check.head_seq} verify; their head is {check.head_hash})", err=True)
    if not check.ok:
        raise typer.Exit(code=1)
