"""CLI output off a terminal: tables keep one row per line, and Prefect's drain progress is not printed."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from colony.catalog import load_registry
from colony.cli import app

COLONY = Path(sys.executable).parent / "colony"


def test_a_piped_table_keeps_each_row_on_one_line(tmp_path: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    listed = subprocess.run(
        [str(COLONY), "tools", "list"],
        env={**environment, "COLONY_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )  # stdout is a pipe: no terminal, no COLUMNS
    rows = [line for line in listed.stdout.splitlines() if line.startswith("│")]
    names = list(load_registry())
    assert len(rows) == len(names), listed.stdout
    for name, row in zip(sorted(names), rows, strict=True):
        assert row.split("│")[1].strip() == name and "…" not in row


def test_prefect_drain_progress_is_silenced_but_dropped_items_still_warn(caplog: pytest.LogCaptureFixture) -> None:
    CliRunner().invoke(app, ["tools", "list"])
    with caplog.at_level(logging.WARNING):
        logging.getLogger("APILogWorker").warning("Still processing items: 3 items remaining...")
        logging.getLogger("EventsWorker").warning("Still processing items: 1 items remaining...")
        logging.getLogger("EventsWorker").warning("Service %r queue is full (%d items), dropping item", "x", 9)
    assert [record.getMessage() for record in caplog.records] == ["Service 'x' queue is full (9 items), dropping item"]
