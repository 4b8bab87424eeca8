"""Settings for tests: no process-wide settings chosen at the start, and the secrets every part can hold.

Each test starts with no process-wide settings chosen, as a fresh ``colony`` process does.

Commands and flows run in the test process make the settings they loaded this process's
sandbox and HPC defaults (``colony.settings.use_settings``); without this, the next test
would see them instead of its own environment.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from colony.settings import use_settings

# One secret of each kind the settings model holds, as the environment gives them.
SECRET_VARIABLES = {
    "COLONY_ATTESTATION_SECRET": "attest-" + "k" * 32,
    "COLONY_HPC_TOKEN": "hpc-token-secret",
    "COLONY_HPC_TOKENS": '{"hpc-table-secret": {"agent": "runner"}}',
    "COLONY_GATEWAY_TOKENS": '{"gateway-table-secret": {"agent": "ops", "operator": true}}',
    "COLONY_GATEWAY_PEERS": '[{"url": "http://10.0.0.2:8787", "token": "peer-token-secret"}]',
}


@pytest.fixture(autouse=True)
def no_chosen_settings() -> Iterator[None]:
    """Forget the settings a test's commands or flows chose for the process."""
    yield
    use_settings(None)
