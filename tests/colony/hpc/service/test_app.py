"""The HPC REST service over real HTTP, on moto's S3 and Batch."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from colony.errors import AWSError, HPCLimitError, HPCRequestError, HPCUnavailableError
from colony.hpc import (
    ArtifactDescriptor,
    HPCClient,
    HPCClientConfig,
    InputArtifact,
    JobRequest,
    JobState,
    upload_inputs,
)
from colony.spec import GpuRequirement, ResourceRequirements
from tests.services import free_port
from tests.services.hpc import HPCStack


def request(name: str = "echo-1", size: int = 5, **changes: object) -> JobRequest:
    values: dict[str, object] = {
        "name": name,
        "tool": "echo",
        "artifacts": [ArtifactDescriptor(key="in/data.txt", size_bytes=size, content_type="text/plain")],
        **changes,
    }
    return JobRequest.model_validate(values)


async def test_openapi_schema_is_served_without_a_token(hpc_stack: HPCStack) -> None:
    schema = httpx.get(f"{hpc_stack.url}/openapi.json").json()
    assert "/v1/jobs/{name}/submit" in schema["paths"]
    assert schema["info"]["title"] == "Colony HPC service"


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_api_pages_load_every_asset_from_the_service_itself(hpc_stack: HPCStack, page: str) -> None:
    html = httpx.get(f"{hpc_stack.url}{page}").text
    assets = [a or b for a, b in re.findall(r"""(?:src|href)=["']([^"']+)["']|url: *["']([^"']+)["']""", html)]
    assert any(asset.endswith(".js") for asset in assets) and not [asset for asset in assets if "//" in asset]
    assert all(httpx.get(f"{hpc_stack.url}{asset}").status_code == 200 for asset in assets)


async def test_every_job_route_needs_the_bearer_token(hpc_stack: HPCStack) -> None:
    answer = httpx.post(f"{hpc_stack.url}/v1/jobs", json=request().model_dump(mode="json"))
    assert answer.status_code == 401
    wrong = httpx.get(f"{hpc_stack.url}/v1/jobs/x", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert "bearer token" in wrong.json()["error"]["message"]


async def test_create_upload_submit_status_outputs(hpc_stack: HPCStack, tmp_path: Path) -> None:
    client = hpc_stack.client
    created = await client.create_job(request())
    assert created.record.state is JobState.CREATED
    (target,) = created.uploads
    assert target.url and target.s3_key == "jobs/default/echo-1/inputs/in/data.txt"
    source = tmp_path / "data.txt"
    source.write_text("hello")
    await client.upload("echo-1", target, source)
    body = hpc_stack.aws.client("s3").get_object(Bucket="colony-hpc", Key=target.s3_key)["Body"].read()
    assert body == b"hello"

    status = await client.submit("echo-1")
    assert status.batch_job_id
    again = await client.submit("echo-1")
    assert again.batch_job_id == status.batch_job_id
    assert len(hpc_stack.batch_jobs("echo-1")) == 1

    final = await client.status("echo-1")
    assert final.state is JobState.SUCCEEDED
    hpc_stack.put_output("echo-1", "result.txt", b"done")
    (output,) = await client.outputs("echo-1")
    assert output.key == "result.txt" and output.size_bytes == 4
    downloaded = await client.download(output, tmp_path / "out" / "result.txt")
    assert downloaded.read_bytes() == b"done"


async def test_creating_the_same_job_twice_returns_one_record(hpc_stack: HPCStack) -> None:
    first = await hpc_stack.client.create_job(request())
    second = await hpc_stack.client.create_job(request())
    assert first.record.created_at == second.record.created_at
    with pytest.raises(HPCRequestError, match="exists with other inputs") as caught:
        await hpc_stack.client.create_job(request(size=6))
    assert caught.value.status_code == 409


async def test_large_artifacts_upload_in_parts(hpc_stack: HPCStack, tmp_path: Path) -> None:
    size = 11 * 1024 * 1024 + 17
    source = tmp_path / "big.bin"
    with source.open("wb") as handle:
        for index in range(size // 4096 + 1):
            handle.write(index.to_bytes(4, "big") * 1024)
        handle.truncate(size)
    created = await hpc_stack.client.create_job(request(size=size))
    (target,) = created.uploads
    assert target.url is None and len(target.parts) == 3
    await hpc_stack.client.upload("echo-1", target, source)
    head = hpc_stack.aws.client("s3").head_object(Bucket="colony-hpc", Key=target.s3_key)
    assert head["ContentLength"] == size
    submitted = await hpc_stack.client.submit("echo-1")
    assert submitted.batch_job_id


async def test_limits_are_checked_and_each_violation_named(hpc_stack: HPCStack) -> None:
    greedy = ResourceRequirements(
        min_vcpus=64, min_memory_gb=512, gpu=GpuRequirement(kind="a100", count=4), expected_wallclock_seconds=99999
    )
    with pytest.raises(HPCLimitError) as caught:
        await hpc_stack.client.create_job(request(resources=greedy))
    assert [v.split(":")[0] for v in caught.value.violations] == [
        "max_vcpus",
        "max_memory_gb",
        "max_gpus",
        "max_wallclock_seconds",
    ]
    assert "asks for 64 vCPUs, limit is 16" in caught.value.violations[0]


async def test_unknown_tool_names_the_configured_ones(hpc_stack: HPCStack) -> None:
    with pytest.raises(HPCRequestError, match=r"unknown tool 'nope'.*tools: echo") as caught:
        await hpc_stack.client.create_job(request(tool="nope"))
    assert caught.value.status_code == 404


async def test_a_job_definition_missing_from_batch_is_named(start_hpc) -> None:
    stack = start_hpc(job_definitions={"echo": "not-registered"})
    with pytest.raises(HPCRequestError, match="job definition 'not-registered' for tool 'echo' does not exist"):
        await stack.client.create_job(request())


async def test_submit_refuses_while_an_artifact_is_missing(hpc_stack: HPCStack) -> None:
    await hpc_stack.client.create_job(request())
    with pytest.raises(HPCRequestError, match=r"missing input artifact\(s\): in/data.txt") as caught:
        await hpc_stack.client.submit("echo-1")
    assert caught.value.status_code == 409
    assert hpc_stack.batch_jobs("echo-1") == []


async def test_unknown_job_is_not_found(hpc_stack: HPCStack) -> None:
    with pytest.raises(HPCRequestError, match="no HPC job named 'ghost'") as caught:
        await hpc_stack.client.status("ghost")
    assert caught.value.status_code == 404


async def test_an_expired_upload_url_is_refused_then_renewed(hpc_stack: HPCStack, tmp_path: Path) -> None:
    (target,) = (await hpc_stack.client.create_job(request())).uploads
    expired = target.model_copy(update={"expires_at": datetime.now(UTC) - timedelta(seconds=1)})
    source = tmp_path / "data.txt"
    source.write_text("hello")
    with pytest.raises(HPCRequestError, match=r"upload URL for data\.txt has expired"):
        await hpc_stack.client.upload("echo-1", expired, source)
    artifact = InputArtifact(key="in/data.txt", path=source, content_type="text/plain")
    assert await upload_inputs(hpc_stack.client, "echo-1", [expired], [artifact]) == ["in/data.txt"]
    assert (await hpc_stack.client.submit("echo-1")).batch_job_id


async def test_s3_errors_keep_their_aws_code(start_hpc) -> None:
    stack = start_hpc(bucket="no-such-bucket")
    with pytest.raises(AWSError) as caught:
        await stack.client.create_job(request())
    assert caught.value.code == "NoSuchBucket"
    assert caught.value.operation in ("GetObject", "PutObject")


async def test_batch_errors_keep_their_aws_code(start_hpc, tmp_path: Path) -> None:
    stack = start_hpc(job_queue="no-such-queue")
    created = await stack.client.create_job(request())
    source = tmp_path / "data.txt"
    source.write_text("hello")
    await stack.client.upload("echo-1", created.uploads[0], source)
    with pytest.raises(AWSError) as caught:
        await stack.client.submit("echo-1")
    assert caught.value.code == "ClientException"
    assert "no-such-queue" in str(caught.value)


async def test_cancel_fails_the_job_with_the_reason(hpc_stack: HPCStack) -> None:
    await hpc_stack.client.create_job(request())
    cancelled = await hpc_stack.client.cancel("echo-1", "operator said stop")
    assert cancelled.state is JobState.FAILED and cancelled.status_reason == "operator said stop"
    with pytest.raises(HPCRequestError, match="cancelled before it was submitted"):
        await hpc_stack.client.submit("echo-1")


async def test_a_service_that_is_down_is_unavailable(hpc_stack: HPCStack) -> None:

    dead = HPCClient(
        HPCClientConfig(endpoint=f"http://127.0.0.1:{free_port()}", token="x", retries=1, retry_backoff_seconds=0)
    )
    with pytest.raises(HPCUnavailableError, match="unreachable"):
        await dead.status("echo-1")


async def test_after_an_uncertain_submit_the_existing_batch_job_is_adopted(hpc_stack: HPCStack, tmp_path: Path) -> None:
    created = await hpc_stack.client.create_job(request())
    source = tmp_path / "data.txt"
    source.write_text("hello")
    await hpc_stack.client.upload("echo-1", created.uploads[0], source)
    # An earlier attempt recorded its intent and reached Batch, then died before saving the job id.
    s3 = hpc_stack.aws.client("s3")
    s3.put_object(
        Bucket="colony-hpc",
        Key=hpc_stack.key("echo-1", "record.json"),
        Body=created.record.model_copy(update={"state": JobState.SUBMITTING}).model_dump_json(),
    )
    batch = hpc_stack.aws.client("batch")
    batch.submit_job(jobName="echo-1", jobQueue="colony-hpc", jobDefinition="colony-echo")  # someone else's
    batch.submit_job(  # another principal's job of the same name
        jobName="echo-1",
        jobQueue="colony-hpc",
        jobDefinition="colony-echo",
        tags={"colony:job-name": "echo-1", "colony:job-owner": "engineer-2"},
    )
    earlier = batch.submit_job(
        jobName="echo-1",
        jobQueue="colony-hpc",
        jobDefinition="colony-echo",
        tags={"colony:job-name": "echo-1", "colony:job-owner": "default"},
    )["jobId"]
    status = await hpc_stack.client.submit("echo-1")
    assert status.batch_job_id == earlier
    assert len(hpc_stack.batch_jobs("echo-1")) == 3  # no fourth job
