"""A gateway over the sample catalog (a side-effecting tool), routing to the shared gateway as its peer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.colony.surfaces.sample_tools import sample_repo
from tests.services.gateway import StartGateway

UNREACHABLE_PEER = "http://127.0.0.1:1"


@pytest.fixture(scope="session")
def governed_gateway(
    start_session_gateway: StartGateway, gateway_url: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """Its URL and the notes file its append_note tool writes; peers: a dead one, then the shared gateway."""
    root = sample_repo(tmp_path_factory.mktemp("repo"))
    home = tmp_path_factory.mktemp("home")
    url = start_session_gateway(
        COLONY_REPO_ROOT=str(root), COLONY_HOME=str(home), COLONY_GATEWAY_PEERS=f"{UNREACHABLE_PEER},{gateway_url}"
    )
    return url, home / "notes.txt"
