"""A runtime over a small catalog of test tools, with its own kernel under the test's COLONY_HOME."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from colony.kernel import ColonyKernel
from colony.runtime import Catalog, KernelProvider, Runtime

SAMPLES = "tests.colony.surfaces.sample_tools"
DOUBLES = "tests.doubles"
ENTRIES = {
    "sleeper": ("sleep", f"{SAMPLES}.Sleeper"),
    "async_sleeper": ("sleep", f"{SAMPLES}.AsyncSleeper"),
    "spinner": ("spin", f"{SAMPLES}.Spinner"),
    "append_note": ("append_note", f"{SAMPLES}.AppendNote"),
    "slow_writer": ("write_later", f"{SAMPLES}.SlowWriter"),
    "ledger_double": ("write_entry", f"{DOUBLES}.LedgerToolDouble"),
    "unit_convert": ("convert_units", "tools.unit_convert.UnitConvert"),
}


def write_registry(root: Path, names: list[str]) -> Path:
    """A registry file holding ``names`` from ENTRIES."""
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tools = [{"name": n, "capability": ENTRIES[n][0], "capability_fqn": ENTRIES[n][1]} for n in names]
    path.write_text(json.dumps({"version": 1, "tools": tools}))
    return path


@pytest.fixture
def kernel() -> ColonyKernel:
    return ColonyKernel.from_env()


@pytest.fixture
async def make_runtime(tmp_path: Path, kernel: ColonyKernel) -> AsyncIterator[Callable[..., Runtime]]:
    made: list[Runtime] = []

    def make(names: list[str] | None = None, **options: object) -> Runtime:
        path = write_registry(tmp_path / f"repo{len(made)}", names or list(ENTRIES))
        runtime = Runtime(Catalog(path), kernels=KernelProvider(kernel), **options)  # type: ignore[arg-type]
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.pool.shutdown()
