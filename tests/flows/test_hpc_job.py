"""The hpc-job flow against the HPC service on moto, under a real Prefect API."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey, FlowFilter, FlowFilterName

from colony.errors import HPCLimitError, HPCRequestError, HPCUnavailableError
from colony.hpc import HPCClientConfig, InputArtifact, PollPolicy
from colony.spec import ResourceRequirements
from flows.hpc_job import HPCJobRequest, PrefectJobRunner, hpc_job
from tasks.hpc import progress_key
from tests.colony.hpc.echo_tool import EchoJob, play_echo
from tests.services import free_port
from tests.services.hpc import HPCStack

# Prefect's own API clients leave sockets to the test server for the garbage collector.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

FAST = PollPolicy(initial_seconds=0.05, max_seconds=0.2)


def job_request(stack: HPCStack, tmp_path: Path, name: str = "echo-flow", **changes: object) -> HPCJobRequest:
    source = tmp_path / "deck.txt"
    source.write_text("deck")
    values: dict[str, object] = {
        "tool": "echo",
        "name": name,
        "artifacts": [InputArtifact(key="deck.txt", path=source, content_type="text/plain")],
        "resources": ResourceRequirements(min_vcpus=2, min_memory_gb=1, expected_wallclock_seconds=60),
        "poll": FAST,
        "output_dir": tmp_path / "outputs",
        "client": stack.client.config,
        **changes,
    }
    return HPCJobRequest.model_validate(values)


def put_output(stack: HPCStack, name: str, key: str, body: bytes) -> None:
    """Play the job's part: write one output object under the job's output prefix."""
    stack.put_output(name, key, body)


async def test_the_flow_runs_the_whole_cycle(prefect_harness: str, hpc_stack: HPCStack, tmp_path: Path) -> None:
    put_output(hpc_stack, "echo-flow", "result.json", b'{"ok": true}')
    outputs = await hpc_job(job_request(hpc_stack, tmp_path))
    assert Path(outputs["result.json"]).read_bytes() == b'{"ok": true}'
    uploaded = hpc_stack.aws.client("s3").get_object(
        Bucket="colony-hpc", Key=hpc_stack.key("echo-flow", "inputs/deck.txt")
    )
    assert uploaded["Body"].read() == b"deck"
    (job,) = hpc_stack.batch_jobs("echo-flow")
    assert job["status"] == "SUCCEEDED"
    async with get_client() as prefect:
        (progress,) = await prefect.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[progress_key("echo-flow")]))
        )
    assert progress.type == "progress" and progress.data == 100.0


async def test_a_repeated_call_is_a_cache_hit(prefect_harness: str, hpc_stack: HPCStack, tmp_path: Path) -> None:
    put_output(hpc_stack, "echo-flow", "result.json", b"1")
    first = await hpc_job(job_request(hpc_stack, tmp_path))
    second = await hpc_job(job_request(hpc_stack, tmp_path, output_dir=tmp_path / "again"))
    assert Path(first["result.json"]).read_bytes() == Path(second["result.json"]).read_bytes() == b"1"
    assert len(hpc_stack.batch_jobs("echo-flow")) == 1


async def test_limits_are_enforced_before_anything_is_submitted(
    prefect_harness: str, hpc_stack: HPCStack, tmp_path: Path
) -> None:
    greedy = ResourceRequirements(min_vcpus=32, min_memory_gb=128)
    with pytest.raises(HPCLimitError, match=r"max_vcpus.*max_memory_gb"):
        await hpc_job(job_request(hpc_stack, tmp_path, resources=greedy))
    assert hpc_stack.batch_jobs("echo-flow") == []


async def test_a_service_that_is_down_is_retried_then_reported(
    prefect_harness: str, hpc_stack: HPCStack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = HPCClientConfig(endpoint=f"http://127.0.0.1:{free_port()}", token="t", retries=0)
    with caplog.at_level(logging.INFO), pytest.raises(HPCUnavailableError, match="unreachable"):
        await hpc_job(job_request(hpc_stack, tmp_path, client=dead))
    assert caplog.text.count("Retry 1/2 will start") == 1 and caplog.text.count("Retry 2/2 will start") == 1


async def test_a_refusal_is_not_retried(
    prefect_harness: str, hpc_stack: HPCStack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO), pytest.raises(HPCRequestError, match="unknown tool 'nope'"):
        await hpc_job(job_request(hpc_stack, tmp_path, tool="nope"))
    assert "Retry" not in caplog.text


@pytest.mark.slow
def test_importing_flows_makes_the_flow_the_hpc_job_runner() -> None:
    import subprocess
    import sys

    code = (
        "from colony.hpc import default_job_runner\n"
        "print(type(default_job_runner()).__name__)\n"
        "import flows, sys\n"
        "print(type(default_job_runner()).__name__)\n"
        "print('flows.hpc_job' in sys.modules)"  # the flow loads with the first job, not with every flow run
    )
    answer = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert answer.stdout.split() == ["InProcessJobRunner", "PrefectJobRunner", "False"]


async def test_a_tool_s_job_runs_as_the_hpc_job_flow_with_the_prefect_runner(
    prefect_harness: str, hpc_stack: HPCStack, tmp_path: Path
) -> None:
    name = play_echo(hpc_stack, tmp_path, "via prefect", "flowed")
    tool = EchoJob(client=hpc_stack.client, settings=hpc_stack.settings, workdir=tmp_path, runner=PrefectJobRunner())
    assert await tool.invoke("run_echo", {"text": "via prefect"}) == "flowed"
    async with get_client() as prefect:
        runs = await prefect.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=["hpc-job"])))
        (progress,) = await prefect.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[progress_key(name)]))
        )
    assert any(run.parameters["request"]["name"] == name for run in runs)
    assert progress.data == 100.0
