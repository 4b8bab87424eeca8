"""Each test starts with no process-wide settings chosen, as a fresh ``colony`` process does.

Commands and flows run in the test process make the settings they loaded this process's
sandbox and HPC defaults (``colony.settings.use_settings``); without this, the next test
would see them instead of its own environment.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from colony.settings import use_settings


@pytest.fixture(autouse=True)
def no_chosen_settings() -> Iterator[None]:
    """Forget the settings a test's commands or flows chose for the process."""
    yield
    use_settings(None)
