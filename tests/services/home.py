"""An isolated COLONY_HOME per test, so no test sees another's state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def colony_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, empty Colony home directory for the test."""
    home = tmp_path / "colony-home"
    home.mkdir()
    monkeypatch.setenv("COLONY_HOME", str(home))
    yield home
