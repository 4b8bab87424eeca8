"""Shared fixtures: every module under tests/services/ is a fixture plugin.

A test is marked by the services its fixtures start, so no file marks itself by hand:
``docker``, ``postgres``, ``prefect``, ``node`` and ``moto`` for the service, ``slow`` for the
fixtures (and the few tests) that take most of the suite's time. ``make test-fast`` runs the
tests with none of these marks. Session-scoped servers start once per xdist worker; tests
bound to fixed ports are grouped (``xdist_group``) onto one worker.
"""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# How fast Hypothesis draws its inputs depends on the machine's load, not on the code under test:
# on a shared CI machine its too_slow health check fails correct properties.
settings.register_profile("colony", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("colony")

pytest_plugins = sorted(
    f"tests.services.{path.stem}"
    for path in (Path(__file__).parent / "services").glob("*.py")
    if path.stem != "__init__"
)

#: Each marker, and the fixtures that give it (any fixture depending on one of them does too).
MARKERS_BY_FIXTURE: dict[str, frozenset[str]] = {
    "docker": frozenset({"docker_client", "busybox_image", "job_image", "moto_batch_docker"}),
    "postgres": frozenset({"postgres_server"}),
    "prefect": frozenset({"prefect_harness", "prefect_server", "prefect_server_factory"}),
    "node": frozenset({"typescript_client", "node_servers"}),
    "moto": frozenset({"moto_server"}),
    # Fixtures that start colony processes (gateways, deployment workers, a seed's session, MCP servers):
    # their tests are the slow ones.
    "slow": frozenset(
        {
            "start_gateway",
            "start_session_gateway",
            "gateway",
            "workers",
            "phases",
            "outcomes",
            "seed_004_report",
            "upstream",
        }
    ),
}

#: Tests that cannot run side by side (fixed ports): under ``--dist loadgroup`` they run on one worker.
#: Session servers need no group: each worker starts its own (own port, home and database).
GROUPS_BY_FIXTURE: dict[str, str] = {
    "seed_004_report": "seed-004-ports",  # the seed's session listens on the ports the seed names
}

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist hands its workers the terminal's width as COLUMNS; to the CLI (colony/cli/output.py)
    # that is a width asked for, which a test run never asks unless the test sets it.
    os.environ.pop("COLUMNS", None)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by the services its fixture closure starts."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        for marker, givers in MARKERS_BY_FIXTURE.items():
            if fixtures & givers and item.get_closest_marker(marker) is None:
                item.add_marker(marker)
        for fixture, group in GROUPS_BY_FIXTURE.items():
            if fixture in fixtures and item.get_closest_marker("xdist_group") is None:
                item.add_marker(pytest.mark.xdist_group(group))
