"""Kernel fixtures: a kernel on a fresh SQLite file under the test's COLONY_HOME, with a clock the test drives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from colony.kernel import ColonyKernel, KernelSettings

SEED_NOW = 1_751_234_500.0


class FakeClock:
    """A clock the test moves by hand (a fake: time itself cannot be driven)."""

    def __init__(self, now: float = SEED_NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def _one_agent_may_hold_the_whole_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests weigh one agent against the whole period; tests/security/test_budget_attacks.py weighs shares."""
    monkeypatch.setenv("COLONY_AGENT_BUDGET_SHARE", "1")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(colony_home: Path) -> KernelSettings:
    return KernelSettings(home=colony_home, database_url=None)


@pytest.fixture
def kernel(settings: KernelSettings, clock: FakeClock) -> Iterator[ColonyKernel]:
    instance = ColonyKernel(settings, clock=clock)
    yield instance
    instance.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, colony_home: Path) -> str:
    """A fresh kernel database: a SQLite file, then a PostgreSQL database (the store suite runs on both)."""
    if request.param == "sqlite":
        return f"sqlite:///{colony_home / 'shared.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def any_kernel(database_url: str, clock: FakeClock) -> Iterator[ColonyKernel]:
    """A kernel on each database in turn, with the test's clock."""
    instance = ColonyKernel(KernelSettings(database_url=database_url, budget_llm_calls=10), clock=clock)
    yield instance
    instance.close()


def good_plan(**overrides: object) -> dict[str, object]:
    """A proposal no vector objects to."""
    plan: dict[str, object] = {
        "agent_id": "engineer-1",
        "action_type": "patch_file",
        "target": "pkg.parser",
        "rationale": "Fix the off-by-one error in the branch name parser reported by the nightly run",
        "rollback_plan": "git revert the commit and re-run the parser tests",
        "evidence": '{"tests": ["tests/test_parser.py::test_slash"]}',
    }
    plan.update(overrides)
    return plan
