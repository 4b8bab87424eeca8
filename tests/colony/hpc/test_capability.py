"""HPCToolCapability: an abstract base, one client per process, limits as preconditions."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from colony.hpc import HPCClient, HPCClientConfig, HPCLimits, HPCSettings, HPCToolCapability
from colony.hpc.capability import default_client, default_settings
from colony.spec import ExecutionLocality, GpuRequirement, ResourceRequirements, ToolSpec
from tools.fdtd_sweep import FdtdSweep


@pytest.fixture
def fresh_defaults() -> None:
    default_settings.cache_clear()
    default_client.cache_clear()
    yield
    default_settings.cache_clear()
    default_client.cache_clear()


def test_the_process_client_is_built_once_from_the_environment(
    fresh_defaults: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_HPC_ENDPOINT", "http://127.0.0.1:9100")
    monkeypatch.setenv("COLONY_HPC_TOKEN", "env-token")
    first = FdtdSweep().client
    assert first is FdtdSweep().client is default_client()
    assert first.config.endpoint == "http://127.0.0.1:9100"
    assert first.config.token.get_secret_value() == "env-token"


def test_an_injected_client_wins(fresh_defaults: None) -> None:
    injected = HPCClient(HPCClientConfig(endpoint="http://127.0.0.1:9200", token=SecretStr("t")))
    assert FdtdSweep(client=injected).client is injected


def test_an_intermediate_base_needs_no_spec_but_a_tool_does() -> None:
    assert HPCToolCapability.__dict__["__abstract_tool__"] is True
    with pytest.raises(TypeError, match="must declare `spec"):

        class NoSpec(HPCToolCapability):
            pass


async def test_each_limit_violation_is_its_own_warning() -> None:
    class Greedy(FdtdSweep):
        spec = FdtdSweep.spec.model_copy(
            update={
                "name": "greedy",
                "resource_requirements": ResourceRequirements(
                    min_vcpus=128,
                    min_memory_gb=2048,
                    gpu=GpuRequirement(kind="a100", count=8),
                    expected_wallclock_seconds=10**6,
                ),
            }
        )

    settings = HPCSettings(token=SecretStr("t"), job_definitions={"greedy": "g"}, limits=HPCLimits())
    report = await Greedy(settings=settings).invoke("check_preconditions")
    assert report["ok"] is False
    assert [warning.split(":")[0] for warning in report["warnings"]] == [
        "operator limit max_vcpus",
        "operator limit max_memory_gb",
        "operator limit max_gpus",
        "operator limit max_wallclock_seconds",
    ]


def test_the_card_says_it_runs_on_batch() -> None:
    card = FdtdSweep().get_action_group_description()
    assert "AWS Batch" in card and FdtdSweep.spec.execution_locality is ExecutionLocality.HPC
    assert isinstance(FdtdSweep.spec, ToolSpec)
