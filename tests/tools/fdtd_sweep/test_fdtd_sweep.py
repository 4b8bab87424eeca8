"""fdtd_sweep as a tool: its S3 job contract, its bad input, and the whole cycle on Batch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from colony.errors import HPCLimitError, ToolInputError
from colony.hpc import HPCLimits, PollPolicy
from colony.spec import ResourceRequirements
from tests.services.hpc import HPCStack, register_job_definition
from tests.services.hpc_image import python_job_container
from tools.fdtd_sweep import FdtdSweep
from tools.fdtd_sweep.job import main

SMALL = {"relative_permittivities": [1.0, 4.0], "cells": 150, "steps": 1500, "slab_cells": 20}


def test_the_job_reads_its_deck_from_s3_and_writes_results_back(
    hpc_stack: HPCStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3 = hpc_stack.aws.client("s3")
    s3.put_object(Bucket="colony-hpc", Key="jobs/j/inputs/deck.json", Body=json.dumps(SMALL).encode())
    monkeypatch.setenv("COLONY_HPC_INPUT_URI", "s3://colony-hpc/jobs/j/inputs/")
    monkeypatch.setenv("COLONY_HPC_OUTPUT_URI", "s3://colony-hpc/jobs/j/outputs/")
    assert main() == 0
    results = json.loads(s3.get_object(Bucket="colony-hpc", Key="jobs/j/outputs/results.json")["Body"].read())
    assert [point["relative_permittivity"] for point in results["points"]] == [1.0, 4.0]


def test_the_job_refuses_a_bad_deck_with_exit_code_2(
    hpc_stack: HPCStack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deck = {**SMALL, "cells": 10}
    hpc_stack.aws.client("s3").put_object(Bucket="colony-hpc", Key="jobs/j/inputs/deck.json", Body=json.dumps(deck))
    monkeypatch.setenv("COLONY_HPC_INPUT_URI", "s3://colony-hpc/jobs/j/inputs/")
    monkeypatch.setenv("COLONY_HPC_OUTPUT_URI", "s3://colony-hpc/jobs/j/outputs/")
    assert main() == 2
    assert "cells: must be an integer from 100 to 5000" in capsys.readouterr().err


async def test_bad_arguments_are_named_before_any_job() -> None:
    tool = FdtdSweep()
    with pytest.raises(ToolInputError) as caught:
        await tool.invoke("run_fdtd_sweep", {"relative_permittivities": [0.5]})
    assert caught.value.errors[0].field == "relative_permittivities"
    with pytest.raises(ToolInputError) as thick:
        await tool.invoke("run_fdtd_sweep", {"relative_permittivities": [2.0], "slab_cells": 200})
    assert thick.value.errors[0].field == "slab_cells"
    with pytest.raises(ToolInputError, match="unexpected argument"):
        await tool.invoke("run_fdtd_sweep", {"relative_permittivities": [2.0], "mesh": 1})


async def test_preconditions_warn_on_each_operator_limit(hpc_stack: HPCStack) -> None:
    tight = hpc_stack.settings.model_copy(
        update={"limits": HPCLimits(max_vcpus=1, max_memory_gb=0.5, max_wallclock_seconds=60)}
    )
    report = await FdtdSweep(client=hpc_stack.client, settings=tight).invoke("check_preconditions")
    assert report["ok"] is False
    assert [warning.split(":")[0] for warning in report["warnings"]] == [
        "operator limit max_memory_gb",
        "operator limit max_wallclock_seconds",
        "no AWS Batch job definition is configured for 'fdtd_sweep'",
    ]
    with pytest.raises(HPCLimitError, match=r"max_memory_gb.*max_wallclock_seconds"):
        await FdtdSweep(client=hpc_stack.client, settings=tight).invoke("run_fdtd_sweep", SMALL)


@pytest.fixture
def sweep_stack(start_hpc: Callable[..., HPCStack], job_image: str) -> HPCStack:
    """The HPC service with fdtd_sweep's job definition, its jobs run as real containers."""
    stack = start_hpc(job_definitions={"fdtd_sweep": "colony-fdtd-sweep"})
    register_job_definition(stack.aws, "colony-fdtd-sweep", **python_job_container("tools.fdtd_sweep.job"))
    stack.aws.configure(batch_docker=True)
    return stack


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_sweep_runs_on_batch_and_a_repeat_is_served_from_cache(
    prefect_harness: str, sweep_stack: HPCStack, tmp_path: Path
) -> None:
    tool = FdtdSweep(
        client=sweep_stack.client,
        settings=sweep_stack.settings,
        workdir=tmp_path,
        poll_policy=PollPolicy(initial_seconds=0.2, max_seconds=1),
    )
    assert (await tool.invoke("check_preconditions"))["ok"] is True
    result = await tool.invoke("run_fdtd_sweep", SMALL)
    free, dense = result["points"]
    assert free["reflectance"] == 0.0 and dense["reflectance"] > 0.05
    assert dense["reflectance"] + dense["transmittance"] == pytest.approx(1.0, abs=1e-3)

    again = await tool.invoke("run_fdtd_sweep", SMALL)
    assert again == result
    jobs = [
        job
        for state in ("SUCCEEDED", "FAILED", "RUNNING")
        for job in sweep_stack.aws.client("batch").list_jobs(jobQueue="colony-hpc", jobStatus=state)["jobSummaryList"]
    ]
    assert [job["status"] for job in jobs] == ["SUCCEEDED"]


def test_the_spec_asks_for_what_one_sweep_needs() -> None:
    assert FdtdSweep.spec.resource_requirements == ResourceRequirements(
        min_vcpus=1, min_memory_gb=1.0, expected_wallclock_seconds=300
    )
    assert {"tool", "hpc", "em", "fdtd"} <= FdtdSweep().get_capability_tags()
