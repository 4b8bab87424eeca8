"""A real Docker engine, and the sandbox role images built on it once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import docker
import pytest

from colony.sandbox.build import build_role_image
from colony.sandbox.config import DEFAULT_ROLES
from tests.services import unavailable


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    """A client of the machine's Docker engine; unavailable when none answers."""
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as error:
        unavailable(f"no Docker engine answers: {error}")
    yield client
    client.close()


@pytest.fixture(scope="session")
def busybox_image(docker_client: Any) -> str:
    """The busybox sandbox role's image, built locally (cached layers make a rebuild quick)."""
    role = DEFAULT_ROLES["busybox"]
    build_role_image(docker_client, "busybox", role)
    return role.image
