"""A real Prefect API for flow tests: ``prefect_test_harness`` (its own temporary database)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect.settings import PREFECT_API_URL
from prefect.testing.utilities import prefect_test_harness


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[str]:
    """Run the session's flows against a temporary Prefect server; its API URL."""
    with prefect_test_harness(server_startup_timeout=60):
        yield str(PREFECT_API_URL.value())
