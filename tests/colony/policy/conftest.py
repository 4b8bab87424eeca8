"""A runtime over the repository's tools plus the policy test tools, with a policies directory per test."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from colony.kernel import ColonyKernel
from colony.policy import PolicySettings
from colony.runtime import Catalog, KernelProvider, Runtime

ENTRIES = [
    ("deployer", "deploy", "tests.colony.policy.policy_tools.Deployer"),
    ("append_note", "append_note", "tests.colony.surfaces.sample_tools.AppendNote"),
    ("unit_convert", "convert_units", "tools.unit_convert.UnitConvert"),
    ("pii_redact", "redact_pii", "tools.pii_redact.PiiRedact"),
    ("shell_exec", "run_shell", "tools.shell_exec.ShellExec"),
]


def policy_repo(root: Path) -> Path:
    """A repository root whose catalog holds ENTRIES; its registry file."""
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tools = [{"name": name, "capability": key, "capability_fqn": fqn} for name, key, fqn in ENTRIES]
    path.write_text(json.dumps({"version": 1, "tools": tools}))
    return path


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    """An empty policies directory (no files: the baseline)."""
    directory = tmp_path / "policies"
    directory.mkdir()
    return directory


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return policy_repo(tmp_path / "repo")


@pytest.fixture
def kernel() -> ColonyKernel:
    kernel = ColonyKernel.from_env()
    kernel.set_trust("trusted-ant", 0.95)
    return kernel


@pytest.fixture
async def make_runtime(registry: Path, policies: Path, kernel: ColonyKernel) -> AsyncIterator[Callable[..., Runtime]]:
    made: list[Runtime] = []

    def make(**options: object) -> Runtime:
        settings = PolicySettings(directory=policies, reload_seconds=0.05)
        runtime = Runtime(Catalog(registry), kernels=KernelProvider(kernel), policies=settings, **options)  # type: ignore[arg-type]
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.pool.shutdown()
