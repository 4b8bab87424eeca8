"""Fixtures shared by the CLI tests: a catalog whose ledger double the gate holds for engineer-1."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.kernel import ColonyKernel
from tests.colony.runtime.conftest import write_registry


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A catalog holding the ledger double, and a gate that holds engineer-1's calls (failures at the tool)."""
    write_registry(tmp_path, ["ledger_double"])
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    kernel = ColonyKernel.from_env()
    kernel.set_trust("engineer-1", 0.4)
    kernel.deposit("tool:ledger_double", "failure", 30.0)
    kernel.close()
    return tmp_path / "entry.txt"
