"""A catalog with the test doubles in it: the runtime resolves catalog names only, never import paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.doubles import doubles_repo


@pytest.fixture(scope="session")
def doubles_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository root whose catalog is the repository's plus the test doubles."""
    return doubles_repo(tmp_path_factory.mktemp("doubles-repo"))


@pytest.fixture
def catalog_with_doubles(doubles_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """COLONY_REPO_ROOT pointing at that catalog, for this test."""
    monkeypatch.setenv("COLONY_REPO_ROOT", str(doubles_root))
    return doubles_root
