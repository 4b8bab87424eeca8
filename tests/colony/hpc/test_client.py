"""HPCClient retries only what is safe to repeat (httpx.MockTransport stands in for the network)."""

from __future__ import annotations

import httpx
import pytest

from colony.errors import AWSError, HPCLimitError, HPCRequestError, HPCUnavailableError
from colony.hpc import HPCClient, HPCClientConfig
from colony.hpc.models import UploadTarget

CONFIG = HPCClientConfig(endpoint="http://hpc.test", token="t", retries=2, retry_backoff_seconds=0)


def counting(responses: list[httpx.Response | Exception]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = responses[min(len(seen) - 1, len(responses) - 1)]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), seen


STATUS = {"name": "j", "state": "RUNNING"}


async def test_reads_are_retried_after_a_503() -> None:
    transport, seen = counting(
        [httpx.Response(503, json={"error": {"type": "X", "message": "busy"}}), httpx.Response(200, json=STATUS)]
    )
    status = await HPCClient(CONFIG, transport=transport).status("j")
    assert status.state.value == "RUNNING" and len(seen) == 2
    assert seen[0].headers["Authorization"] == "Bearer t"


async def test_a_request_that_never_connected_is_retried_then_reported() -> None:
    transport, seen = counting([httpx.ConnectError("refused")])
    with pytest.raises(HPCUnavailableError, match="unreachable"):
        await HPCClient(CONFIG, transport=transport).status("j")
    assert len(seen) == 3


async def test_completing_an_upload_is_not_repeated_after_a_read_timeout() -> None:
    transport, seen = counting([httpx.ReadTimeout("slow")])
    with pytest.raises(HPCUnavailableError, match="failed mid-request"):
        await HPCClient(CONFIG, transport=transport)._call("POST", "/v1/jobs/j/uploads/complete", idempotent=False)
    assert len(seen) == 1


async def test_refusals_are_not_retried_and_keep_their_details() -> None:
    limit = {"error": {"type": "HPCLimitError", "message": "m", "violations": ["max_vcpus: a", "max_gpus: b"]}}
    transport, seen = counting([httpx.Response(422, json=limit)])
    with pytest.raises(HPCLimitError) as caught:
        await HPCClient(CONFIG, transport=transport).submit("j")
    assert caught.value.violations == ["max_vcpus: a", "max_gpus: b"] and len(seen) == 1

    aws = {"error": {"type": "AWSError", "message": "m", "code": "ClientException", "operation": "SubmitJob"}}
    transport, _ = counting([httpx.Response(502, json=aws)])
    with pytest.raises(AWSError) as aws_caught:
        await HPCClient(CONFIG, transport=transport).submit("j")
    assert (aws_caught.value.code, aws_caught.value.operation) == ("ClientException", "SubmitJob")

    transport, _ = counting([httpx.Response(404, text="not json")])
    with pytest.raises(HPCRequestError, match="not json"):
        await HPCClient(CONFIG, transport=transport).status("j")


async def test_an_upload_streams_with_a_content_length(tmp_path) -> None:
    source = tmp_path / "in.bin"
    source.write_bytes(b"x" * 3_000_000)
    transport, seen = counting([httpx.Response(200, headers={"ETag": '"abc"'})])
    target = UploadTarget(
        key="in.bin", s3_key="jobs/j/inputs/in.bin", url="http://s3.test/put", expires_at="2999-01-01T00:00:00Z"
    )
    await HPCClient(CONFIG, transport=transport).upload("j", target, source)
    (request,) = seen
    assert request.headers["Content-Length"] == "3000000" and "Transfer-Encoding" not in request.headers
    assert request.read() == source.read_bytes()


async def test_a_single_url_upload_sends_the_signed_content_type(tmp_path) -> None:
    source = tmp_path / "sim.xml"
    source.write_text("<openEMS/>")
    transport, seen = counting([httpx.Response(200, headers={"ETag": '"abc"'})])
    target = UploadTarget(
        key="sim.xml",
        s3_key="jobs/o/j/inputs/sim.xml",
        url="http://s3.test/put",
        content_type="application/xml",
        expires_at="2999-01-01T00:00:00Z",
    )
    await HPCClient(CONFIG, transport=transport).upload("j", target, source)
    (request,) = seen
    assert request.headers["Content-Type"] == "application/xml"
