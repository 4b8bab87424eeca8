"""Real third-party MCP servers (server-everything, server-filesystem over stdio) behind Colony's gate."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from colony.errors import CapabilityDeniedError, ToolInputError, UpstreamToolError
from colony.kernel import ColonyKernel
from colony.runtime import CallRequest, CallStatus, KernelProvider, Principal, Runtime
from colony.upstream.tools import sessions
from tests.services.upstream import Upstream

AGENT = Principal.of("engineer-1", ["*"])
CASE = {
    "rationale": "Write the nightly report where the dashboard reads it",
    "rollback_plan": "delete the report file again",
    "evidence": {"tests": ["tests/test_report.py::test_layout"], "scope": ["report.txt"]},
}


@pytest.fixture
async def runtime(third_party: Upstream, kernel: ColonyKernel) -> AsyncIterator[Runtime]:
    """A runtime over the home where ``third_party`` pinned server-everything and server-filesystem."""
    made = Runtime(kernels=KernelProvider(kernel))
    yield made
    await made.aclose()


@pytest.fixture
def kernel() -> ColonyKernel:
    return ColonyKernel.from_env()


async def test_their_tools_are_in_the_catalog_under_their_servers_names(runtime: Runtime) -> None:
    tools = runtime.catalog.tools
    assert {"everything__get_sum", "files__write_file", "files__read_text_file"} <= set(tools)
    assert "unit_convert" in tools  # the built-ins are still there
    write = tools["files__write_file"]
    assert write.governed(write.primary_action) and write.cls.spec.side_effecting
    assert {"mcp", "mcp_server:files", "destructive"} <= set(write.cls.spec.policy_tags)
    read = tools["files__read_text_file"]
    assert not read.governed(read.primary_action) and "read_only" in read.cls.spec.policy_tags
    assert runtime.catalog.servers["files"] == tuple(sorted(n for n in tools if n.startswith("files__")))


async def test_a_read_only_call_passes_ungated(runtime: Runtime, files_root: Path) -> None:
    (files_root / "notes.txt").write_text("hello")
    outcome = await runtime.call(CallRequest("files__read_text_file", {"path": str(files_root / "notes.txt")}), AGENT)
    assert outcome.status is CallStatus.EXECUTED and not outcome.governed
    assert "hello" in str(outcome.result)
    summed = await runtime.call(CallRequest("everything__get_sum", {"a": 2, "b": 3}), AGENT)
    assert "5" in summed.result["text"]


async def test_arguments_are_checked_against_the_servers_schema_before_it_is_called(runtime: Runtime) -> None:
    with pytest.raises(ToolInputError, match="'x' is not of type 'number'") as caught:
        await runtime.call(CallRequest("everything__get_sum", {"a": "x", "b": 1}), AGENT)
    assert [error.field for error in caught.value.errors] == ["a"]


async def test_an_upstream_tool_error_is_the_servers_not_the_callers(runtime: Runtime, files_root: Path) -> None:
    with pytest.raises(UpstreamToolError, match="files") as caught:
        await runtime.call(CallRequest("files__read_text_file", {"path": "/etc/passwd"}), AGENT)
    assert caught.value.server == "files"


async def test_a_write_is_gated_held_approved_run_once_and_recorded(
    runtime: Runtime, kernel: ColonyKernel, files_root: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    target = files_root / "report.txt"
    request = CallRequest(
        "files__write_file", {"path": str(target), "content": "figures"}, approval_required=True, **CASE
    )  # type: ignore[arg-type]
    held = await runtime.call(request, AGENT)
    assert held.status is CallStatus.HELD and not target.exists()
    approval_id = held.approval["approval_id"]  # type: ignore[index]
    kernel.approve(approval_id, "ops@example.org", "fine")
    done = await runtime.call(
        CallRequest("files__write_file", {"path": str(target), "content": "figures"}, approval_id=approval_id),
        AGENT,
    )
    assert done.status is CallStatus.EXECUTED and target.read_text() == "figures"
    [consequence] = kernel.consequence_log("engineer-1")
    assert (
        "files__write_file" in consequence.actual_outcome
        and "approved by ops@example.org" in consequence.actual_outcome
    )
    target.unlink()
    again = CallRequest("files__write_file", {"path": str(target), "content": "figures"}, approval_id=approval_id)
    with pytest.raises(Exception, match="already executed"):
        await runtime.call(again, AGENT)
    assert not target.exists()


async def test_a_destructive_tool_is_judged_destructive(
    runtime: Runtime, kernel: ColonyKernel, files_root: Path
) -> None:
    kernel.set_trust("engineer-1", 0.8)
    case = {**CASE, "evidence": {"tests": ["tests/test_report.py::test_layout"]}}  # no scope
    outcome = await runtime.call(
        CallRequest("files__write_file", {"path": str(files_root / "r.txt"), "content": "x"}, **case),  # type: ignore[arg-type]
        AGENT,
    )
    assert outcome.status is not CallStatus.EXECUTED and not (files_root / "r.txt").exists()
    assert "scope" in str(outcome.verdict)


async def test_a_principal_without_the_capability_neither_sees_nor_calls_them(runtime: Runtime) -> None:
    reader = Principal.of("reader", ["tool:files__read_text_file"])
    assert [tool.name for tool in runtime.visible_tools(reader)] == ["files__read_text_file"]
    with pytest.raises(CapabilityDeniedError, match="tool:everything__get_sum"):
        await runtime.call(CallRequest("everything__get_sum", {"a": 1, "b": 2}), reader)


async def test_one_session_per_server_is_shared_and_stopped_with_the_runtime(runtime: Runtime) -> None:
    calls = [runtime.call(CallRequest("everything__get_sum", {"a": n, "b": 1}), AGENT) for n in range(8)]
    results = await asyncio.gather(*calls)
    assert [str(n + 1) in r.result["text"] for n, r in enumerate(results)] == [True] * 8
    servers = sessions.running()
    assert set(servers) == {"everything"} and servers["everything"].starts == 1
    await runtime.aclose()
    assert sessions.running() == {}
