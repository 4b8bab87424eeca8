"""Every flow test sees the repository's catalog plus the test doubles (flows resolve catalog names only).

The deployment-worker fixtures (``api``, ``workers``) come from ``tests.flows.workers``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.flows.workers import api, workers

__all__ = ["api", "workers"]


@pytest.fixture(autouse=True)
def doubles_everywhere(catalog_with_doubles: Path) -> Path:
    return catalog_with_doubles
