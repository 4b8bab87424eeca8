"""load_settings: the settings block when the Prefect API has it, else COLONY_*, and loud when it cannot tell."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import pytest
from prefect.blocks.core import Block
from prefect.settings import PREFECT_API_URL, temporary_settings
from pydantic import SecretStr

from blocks import ColonyConfig, load_settings, save_settings, settings_block_name
from colony.errors import SettingsError
from colony.settings import ColonySettings


@pytest.fixture
def block_name(monkeypatch: pytest.MonkeyPatch) -> str:
    """A settings block name of this test's own, configured as COLONY_SETTINGS_BLOCK."""
    name = f"colony-{uuid4().hex[:8]}"
    monkeypatch.setenv("COLONY_SETTINGS_BLOCK", name)
    return name


@pytest.fixture
def no_prefect_server(prefect_harness: str) -> Iterator[None]:
    """This process configured for no Prefect API, though the harness runs."""
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        yield


def test_the_block_name_follows_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLONY_SETTINGS_BLOCK", raising=False)
    monkeypatch.delenv("COLONY_KERNEL_BLOCK", raising=False)
    assert settings_block_name() == "colony"
    monkeypatch.setenv("COLONY_KERNEL_BLOCK", "older")
    assert settings_block_name() == "older"
    monkeypatch.setenv("COLONY_SETTINGS_BLOCK", "newer")
    assert settings_block_name() == "newer"


@pytest.mark.usefixtures("prefect_harness")
def test_a_saved_block_wins_over_this_machines_variables(
    block_name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "42")
    monkeypatch.setenv("COLONY_GATEWAY_TOKENS", '{"saved-token": {"agent": "ops"}}')
    monkeypatch.setenv("COLONY_HPC_JOB_DEFINITIONS", '{"fdtd_sweep": "fdtd:3"}')
    saved = ColonySettings.from_env()
    assert save_settings(saved) == block_name
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "7")  # another machine, other variables
    monkeypatch.delenv("COLONY_GATEWAY_TOKENS")
    monkeypatch.setenv("COLONY_HPC_JOB_DEFINITIONS", '{"local_tool": "local:1"}')
    monkeypatch.setenv("COLONY_HOME", str(tmp_path / "elsewhere"))
    loaded = load_settings()
    assert loaded.kernel.budget_llm_calls == 42 and "saved-token" in loaded.gateway.token_table()
    assert loaded.hpc.job_definitions == {"fdtd_sweep": "fdtd:3"}  # nothing of this machine's joins the block's
    assert loaded.kernel.home == tmp_path / "elsewhere"  # a path on disk stays this machine's


@pytest.mark.usefixtures("prefect_harness")
def test_without_the_block_the_environment_is_the_settings(block_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "7")
    assert load_settings().kernel.budget_llm_calls == 7
    with pytest.raises(SettingsError, match=f"no settings block {block_name!r}"):
        load_settings(block_name)  # a block asked for by name must be there


@pytest.mark.usefixtures("no_prefect_server")
def test_without_a_prefect_server_the_environment_is_the_settings(
    block_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "7")
    assert load_settings().kernel.budget_llm_calls == 7
    with pytest.raises(SettingsError, match="PREFECT_API_URL names no Prefect server"):
        load_settings(block_name)


class EarlierKernelBlock(Block):
    """The kernel-only block an earlier Colony saved, as its server still holds it."""

    _block_type_name = "Colony Kernel Config"
    _block_type_slug = "colony-kernel-config"

    budget_llm_calls: float | None = None
    attestation_secret: SecretStr | None = None


@pytest.mark.usefixtures("prefect_harness")
def test_an_earlier_kernel_only_block_is_refused_naming_the_fix(block_name: str) -> None:
    EarlierKernelBlock(budget_llm_calls=42, attestation_secret=SecretStr("k" * 32)).save(block_name)
    with pytest.raises(SettingsError, match=rf"{block_name!r} is a 'colony-kernel-config' block.*`colony blocks save`"):
        load_settings()
    save_settings(ColonySettings.from_env())  # `colony blocks save` writes the block that supersedes it
    assert load_settings().kernel.budget_llm_calls == 500


@pytest.mark.usefixtures("prefect_harness")
def test_a_bad_value_in_the_block_is_named(block_name: str) -> None:
    settings = ColonySettings.from_env()
    broken = settings.model_copy(update={"kernel": settings.kernel.model_copy(update={"min_strength": -1.0})})
    ColonyConfig.model_construct(settings=broken).save(block_name)  # as a hand-edited document could be
    with pytest.raises(SettingsError, match=rf"settings block {block_name!r} .* settings\.kernel\.min_strength"):
        load_settings()
