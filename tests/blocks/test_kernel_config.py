"""ColonyKernelConfig: Prefect's block checks, saving and loading, and the flows' fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect.blocks.core import Block
from prefect.testing.standard_test_suites import BlockStandardTestSuite
from pydantic import SecretStr
from typer.testing import CliRunner

from blocks import ColonyKernelConfig, load_kernel_settings
from colony.cli import app
from colony.kernel import AttestationMode, KernelSettings


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


@pytest.mark.usefixtures("prefect_harness")
def test_flows_load_the_saved_block_and_use_the_environment_without_one(tmp_path: Path) -> None:
    assert load_kernel_settings("no-such-block").database_url is None
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    ColonyKernelConfig(
        database_url=url, attestation=AttestationMode.REQUIRED, attestation_secret=SecretStr("k" * 32)
    ).save("colony-test", overwrite=True)
    settings = load_kernel_settings("colony-test")
    assert settings.database_url == url and settings.attestation is AttestationMode.REQUIRED
    assert settings.attestation_secret is not None and settings.attestation_secret.get_secret_value() == "k" * 32


@pytest.mark.usefixtures("prefect_harness")
def test_colony_blocks_register_registers_the_block_type() -> None:
    result = CliRunner().invoke(app, ["blocks", "register"])
    assert result.exit_code == 0, result.output
    assert "Colony Kernel Config" in result.output


def test_the_block_carries_every_kernel_setting_but_the_home() -> None:
    settings = KernelSettings(
        database_url="sqlite:///x.db", attestation_secret="s" * 32, min_strength=0.05, approval_ttl_seconds=60
    )
    carried = ColonyKernelConfig.from_settings(settings).kernel_settings()
    assert carried.model_dump(exclude={"home"}) == settings.model_dump(exclude={"home"})
    assert set(KernelSettings.model_fields) - set(ColonyKernelConfig.model_fields) == {"home"}
