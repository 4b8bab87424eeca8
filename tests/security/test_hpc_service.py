"""Attacks on the HPC service: other principals' jobs, hostile names in paths, uploads sized to flood it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from colony.errors import HPCRequestError
from colony.hpc import ArtifactDescriptor, HPCClient, HPCClientConfig, JobRequest, JobState
from colony.hpc.parts import MAX_OBJECT_BYTES, MIB, TIB
from tests.services.hpc import TOKEN, HPCStack

TABLE = {
    "alice-token": {"agent": "alice", "capabilities": ["tool:echo", "hpc:submit"]},
    "bob-token": {"agent": "bob", "capabilities": ["tool:*", "hpc:submit"], "operator": False},
    "agent-token": {"agent": "dave", "capabilities": ["tool:*"]},
    "ops-token": {"agent": "ops", "capabilities": [], "operator": True},
    "narrow-token": {"agent": "carol", "capabilities": ["tool:other"]},
}


def request(name: str = "echo-1", size: int = 5) -> JobRequest:
    return JobRequest(name=name, tool="echo", artifacts=[ArtifactDescriptor(key="in/data.txt", size_bytes=size)])


@pytest.fixture
def shared(start_hpc: Callable[..., HPCStack]) -> HPCStack:
    """One service, four principals from a token table, plus the single token."""
    return start_hpc(tokens=SecretStr(json.dumps(TABLE)))


def client_for(stack: HPCStack, token: str) -> HPCClient:
    return HPCClient(HPCClientConfig(endpoint=stack.url, token=SecretStr(token), retries=0))


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_another_principal_cannot_read_or_cancel_a_job(shared: HPCStack) -> None:
    alice, bob = client_for(shared, "alice-token"), client_for(shared, "bob-token")
    created = await alice.create_job(request())
    assert created.record.owner == "alice"
    for attempt in (
        bob.status("echo-1"),
        bob.cancel("echo-1", "mine now"),
        bob.outputs("echo-1"),
        bob.submit("echo-1"),
    ):
        with pytest.raises(HPCRequestError, match="no HPC job named 'echo-1'") as caught:
            await attempt
        assert caught.value.status_code == 404
    assert (await alice.status("echo-1")).state is JobState.CREATED


async def test_naming_another_owner_needs_an_operator(shared: HPCStack) -> None:
    await client_for(shared, "alice-token").create_job(request())
    for path in ("/v1/jobs/echo-1", "/v1/jobs/echo-1/outputs"):
        denied = httpx.get(f"{shared.url}{path}", params={"owner": "alice"}, headers=headers("bob-token"))
        assert denied.status_code == 403
        assert "only an operator may address another principal's jobs" in denied.json()["error"]["message"]
    cancel = httpx.post(
        f"{shared.url}/v1/jobs/echo-1/cancel", params={"owner": "alice"}, headers=headers("bob-token"), json={}
    )
    assert cancel.status_code == 403
    seen = httpx.get(f"{shared.url}/v1/jobs/echo-1", params={"owner": "alice"}, headers=headers("ops-token"))
    assert seen.status_code == 200 and seen.json()["state"] == "CREATED"
    stopped = httpx.post(
        f"{shared.url}/v1/jobs/echo-1/cancel",
        params={"owner": "alice"},
        headers=headers("ops-token"),
        json={"reason": "operator stop"},
    )
    assert stopped.status_code == 200 and stopped.json()["status_reason"] == "operator stop"
    assert (await client_for(shared, "alice-token").status("echo-1")).state is JobState.FAILED


async def test_the_same_name_is_two_jobs_for_two_principals(shared: HPCStack, tmp_path: Path) -> None:
    alice, bob = client_for(shared, "alice-token"), client_for(shared, "bob-token")
    mine = await alice.create_job(request())
    theirs = await bob.create_job(request(size=6))  # no conflict: another owner's namespace
    assert mine.uploads[0].s3_key == shared.key("echo-1", "inputs/in/data.txt", owner="alice")
    assert theirs.uploads[0].s3_key == shared.key("echo-1", "inputs/in/data.txt", owner="bob")
    source = tmp_path / "data.txt"
    source.write_text("alice")
    await alice.upload("echo-1", mine.uploads[0], source)
    await alice.submit("echo-1")
    with pytest.raises(HPCRequestError, match="missing input artifact"):
        await bob.submit("echo-1")  # alice's upload is not bob's
    (job,) = shared.batch_jobs("echo-1")
    assert job["status"] == "SUCCEEDED"


async def test_a_token_runs_only_the_tools_it_grants(shared: HPCStack) -> None:
    with pytest.raises(HPCRequestError, match="tool: running 'echo' needs the capability 'tool:echo'") as caught:
        await client_for(shared, "narrow-token").create_job(request())
    assert caught.value.status_code == 403
    assert (await client_for(shared, "alice-token").create_job(request())).record.owner == "alice"


async def test_the_single_token_is_one_principal_beside_the_table(shared: HPCStack) -> None:
    created = await client_for(shared, TOKEN).create_job(request())
    assert created.record.owner == "default"
    with pytest.raises(HPCRequestError) as caught:
        await client_for(shared, "alice-token").status("echo-1")
    assert caught.value.status_code == 404
    unknown = httpx.get(f"{shared.url}/v1/jobs/echo-1", headers=headers("alice-toke"))
    assert unknown.status_code == 401


@pytest.mark.parametrize("name", ["bad.name", "-leading", "x" * 129, "a b", "na%2Fme", "%2E%2E", "é"])
def test_a_hostile_job_name_in_the_path_is_refused_naming_the_field(hpc_stack: HPCStack, name: str) -> None:
    for method, suffix in (("GET", ""), ("POST", "/cancel"), ("POST", "/submit"), ("GET", "/outputs")):
        answer = httpx.request(method, f"{hpc_stack.url}/v1/jobs/{name}{suffix}", headers=headers(TOKEN))
        assert answer.status_code in (404, 422), (name, suffix, answer.status_code)
        if answer.status_code == 422:
            assert "path.name: String should match pattern" in answer.json()["error"]["message"]
        else:  # the router itself found no such route (a decoded '/' splits the path)
            assert answer.json() == {"detail": "Not Found"}


def test_an_unauthenticated_caller_learns_nothing_from_a_bad_name(hpc_stack: HPCStack) -> None:
    assert httpx.get(f"{hpc_stack.url}/v1/jobs/a.b").status_code == 401


def test_an_object_over_five_tib_is_refused_naming_the_field(hpc_stack: HPCStack) -> None:
    body = request().model_dump(mode="json")
    body["artifacts"][0]["size_bytes"] = MAX_OBJECT_BYTES + 1
    answer = httpx.post(f"{hpc_stack.url}/v1/jobs", json=body, headers=headers(TOKEN))
    assert answer.status_code == 422
    assert "artifacts.0.size_bytes" in answer.json()["error"]["message"]
    body["artifacts"][0]["size_bytes"] = 10**12 * 10**9
    assert httpx.post(f"{hpc_stack.url}/v1/jobs", json=body, headers=headers(TOKEN)).status_code == 422


def test_inputs_over_five_tib_together_or_too_many_are_refused(hpc_stack: HPCStack) -> None:
    halves = [{"key": f"part-{index}", "size_bytes": 3 * TIB} for index in range(2)]
    body = {"name": "big", "tool": "echo", "artifacts": halves}
    answer = httpx.post(f"{hpc_stack.url}/v1/jobs", json=body, headers=headers(TOKEN))
    assert answer.status_code == 422 and "one job may declare at most" in answer.json()["error"]["message"]
    many = [{"key": f"f{index}", "size_bytes": 1} for index in range(1001)]
    answer = httpx.post(f"{hpc_stack.url}/v1/jobs", json={**body, "artifacts": many}, headers=headers(TOKEN))
    assert answer.status_code == 422 and "artifacts" in answer.json()["error"]["message"]
    twice = [{"key": "same", "size_bytes": 1}, {"key": "same", "size_bytes": 2}]
    answer = httpx.post(f"{hpc_stack.url}/v1/jobs", json={**body, "artifacts": twice}, headers=headers(TOKEN))
    assert answer.status_code == 422 and "repeated: same" in answer.json()["error"]["message"]


async def test_the_part_size_grows_instead_of_the_url_count(start_hpc: Callable[..., HPCStack], tmp_path: Path) -> None:
    stack = start_hpc(max_upload_urls=4)
    size = 11 * MIB  # 3 parts of the configured 5 MiB each, for each of two inputs
    files = []
    for index in range(2):
        path = tmp_path / f"in-{index}.bin"
        path.write_bytes(bytes([index]) * size)
        files.append(path)
    job = JobRequest(
        name="grown",
        tool="echo",
        artifacts=[ArtifactDescriptor(key=path.name, size_bytes=size) for path in files],
    )
    created = await stack.client.create_job(job)
    urls = sum(len(target.parts) or 1 for target in created.uploads)
    assert urls <= 4
    assert all(target.part_size == 11 * MIB for target in created.uploads)
    for target, path in zip(created.uploads, files, strict=True):
        await stack.client.upload("grown", target, path)
    assert (await stack.client.submit("grown")).batch_job_id
    head = stack.aws.client("s3").head_object(Bucket="colony-hpc", Key=stack.key("grown", "inputs/in-1.bin"))
    assert head["ContentLength"] == size


async def test_an_agent_token_cannot_submit_a_batch_job_around_the_gate(shared: HPCStack) -> None:
    agent = client_for(shared, "agent-token")
    await agent.create_job(request())
    with pytest.raises(HPCRequestError, match="hpc:submit") as refused:
        await agent.submit("echo-1")
    assert refused.value.status_code == 403
