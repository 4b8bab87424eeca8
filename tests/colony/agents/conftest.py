"""Fixtures for the agent tests: a kernel, a runtime over the harness's catalog, agents assembled on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from colony.agents import Agent, AgentSpec, assemble
from colony.kernel import ColonyKernel
from colony.runtime import Runtime
from tests.colony.agents.harness import ENTRIES, agent_runtime


@pytest.fixture
def kernel() -> Iterator[ColonyKernel]:
    kernel = ColonyKernel.from_env()
    yield kernel
    kernel.close()


@pytest.fixture
def runtime(tmp_path: Path, kernel: ColonyKernel) -> Runtime:
    return agent_runtime(tmp_path / "repo", kernel)


@pytest.fixture
def make_agent(runtime: Runtime) -> Callable[..., Agent]:
    def make(**spec: Any) -> Agent:
        return assemble(AgentSpec(**{"name": "clerk-1", "capabilities": tuple(ENTRIES), **spec}), runtime)

    return make
