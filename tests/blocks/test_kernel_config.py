"""ColonyKernelConfig, the kernel-only block an earlier Colony saved: still a sound block, still read as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect.blocks.core import Block
from prefect.testing.standard_test_suites import BlockStandardTestSuite

from blocks.kernel_config import ColonyKernelConfig


class TestColonyKernelConfigBlock(BlockStandardTestSuite):
    @pytest.fixture
    def block(self) -> type[Block]:
        return ColonyKernelConfig

    def test_has_a_valid_image(self, block: type[Block]) -> None:
        assert str(block._logo_url).startswith("https://")


def test_empty_fields_fall_back_to_the_environment(colony_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "42")
    settings = ColonyKernelConfig(budget_runtime_seconds=9.0).kernel_settings()
    assert (settings.budget_llm_calls, settings.budget_runtime_seconds) == (42, 9.0)
    assert settings.home == colony_home
