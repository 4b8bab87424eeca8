"""The errors reference: every ColonyError with its HTTP status, JSON-RPC code and CLI exit code, from their tables."""

from __future__ import annotations

import mkdocs_gen_files

from colony.cli.failures import EXIT_CODES
from colony.errors import ColonyError
from colony.surfaces.error_mapping import HTTP_STATUS, MCP_ERROR_CODE


def nearest(table: dict[type[ColonyError], int], error: type[ColonyError]) -> int:
    """The row of ``error`` in ``table``, or of its nearest ancestor that has one."""
    return next(table[kind] for kind in error.__mro__ if kind in table)


def summary(error: type[ColonyError]) -> str:
    """The first line of the error's docstring, safe in a table cell."""
    return (error.__doc__ or "").strip().splitlines()[0].replace("|", "\\|").replace("<", "&lt;")


lines = [
    "# Errors",
    "",
    "Generated at build time from `colony/errors.py` (the one error hierarchy) and the tables that translate it: "
    "the gateway's HTTP status and the JSON-RPC code of an MCP error (`colony/surfaces/error_mapping.py`), and "
    "the exit status of a `colony` command (`colony/cli/failures.py`). A held call is no error: the CLI exits 2, "
    "HTTP answers 202.",
    "",
    "| error | HTTP | JSON-RPC | CLI exit | what |",
    "|---|---|---|---|---|",
]
for error in HTTP_STATUS:
    http, rpc, status = HTTP_STATUS[error], nearest(MCP_ERROR_CODE, error), nearest(EXIT_CODES, error)
    lines.append(f"| `{error.__name__}` | {http} | {rpc} | {status} | {summary(error)} |")
with mkdocs_gen_files.open("reference/errors.md", "w") as page:
    page.write("\n".join(lines) + "\n")
