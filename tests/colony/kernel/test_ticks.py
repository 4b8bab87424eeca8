"""A keyed tick advances once per key, however often a crashed run is retried: SQLite and PostgreSQL."""

from __future__ import annotations

import multiprocessing

import pytest
from sqlalchemy import select

from colony.errors import KernelInputError
from colony.kernel import ColonyKernel, KernelSettings
from colony.kernel.store import tables
from colony.kernel.ticks import KEY_RETENTION_SECONDS
from tests.colony.kernel.conftest import FakeClock
from tests.colony.kernel.workers import tick_with_key


def test_a_key_applies_once(any_kernel: ColonyKernel) -> None:
    any_kernel.deposit("pkg.a", "risk", 3.8)
    first = any_kernel.tick("flow-run-7")
    again = any_kernel.tick("flow-run-7")
    assert (first.tick_count, again.tick_count) == (1, 1)
    assert again.pheromone_summary.top_signals[0].strength == pytest.approx(3.42)  # evaporated once
    assert any_kernel.tick("flow-run-8").tick_count == 2


def test_no_key_always_advances(any_kernel: ColonyKernel) -> None:
    assert [any_kernel.tick().tick_count for _ in range(3)] == [1, 2, 3]


def test_a_replayed_key_still_reports_the_current_status(any_kernel: ColonyKernel) -> None:
    any_kernel.tick("2026-07-01T00:00:00Z")
    any_kernel.tick()
    assert any_kernel.tick("2026-07-01T00:00:00Z").tick_count == 2


@pytest.mark.parametrize("key", ["", "   ", 7, "k" * 257])
def test_a_bad_key_is_named(any_kernel: ColonyKernel, key: object) -> None:
    with pytest.raises(KernelInputError) as caught:
        any_kernel.tick(key)  # type: ignore[arg-type]
    assert caught.value.fields == ["key"]
    assert any_kernel.status().tick_count == 0


def test_old_keys_are_forgotten(any_kernel: ColonyKernel, clock: FakeClock) -> None:
    any_kernel.tick("old")
    clock.advance(KEY_RETENTION_SECONDS + 1)
    any_kernel.tick("new")
    assert any_kernel.tick("old").tick_count == 3  # a month later the key is free again


def test_processes_racing_on_one_key_tick_once(database_url: str) -> None:
    kernel = ColonyKernel(KernelSettings(database_url=database_url))
    context = multiprocessing.get_context("fork")
    with context.Pool(4) as pool:
        counts = pool.starmap(tick_with_key, [(database_url, f"run-{n % 3}") for n in range(12)])
    assert kernel.status().tick_count == 3 and max(counts) == 3
    rows = kernel.store.run(lambda c: c.execute(select(tables.ticks)).all(), write=False)
    assert sorted((row.tick_key, row.tick_count) for row in rows)[0][0] == "run-0"
    assert sorted(row.tick_count for row in rows) == [1, 2, 3]  # each key advanced exactly one tick
    kernel.close()
