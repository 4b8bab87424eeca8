"""A shell_exec call never outlives its call: the deadline cuts its timeout, and cancellation kills it first."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import docker
import pytest

from colony.deadlines import deadline_scope
from colony.errors import CallTimeoutError
from tools.shell_exec import ShellExec

# Counts the command user's `sleep` processes in the container the listing call runs in.
SLEEPERS = "ps -o user,args | awk '$1 == 65534 && $2 == \"sleep\"' | wc -l"
SLOW = {"script": "echo started; sleep 55", "timeout_seconds": 60}  # the tool itself allows 60 s


@pytest.fixture
def shell(busybox_image: str) -> Iterator[ShellExec]:
    tool = ShellExec()
    yield tool
    asyncio.run(tool.shutdown())


def _container(tool: ShellExec) -> str | None:
    return tool.sandbox_session.container_id(tool._container_plan())


def _exists(client: Any, container_id: str) -> bool:
    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


async def _within(seconds: float, tool: ShellExec, arguments: dict[str, Any]) -> Any:
    with deadline_scope(seconds):
        return await tool.invoke("run_shell", arguments)


def test_a_call_never_outlives_its_deadline(shell: ShellExec, docker_client: Any) -> None:
    asyncio.run(shell.invoke("run_shell", {"script": "true"}))
    container = _container(shell)
    assert container is not None
    result = asyncio.run(_within(2, shell, SLOW))
    assert result["timed_out"] and result["stdout"] == "started\n"
    assert result["duration_seconds"] < 15  # the call's 2 s deadline, not the 60 s the tool allows
    assert not _exists(docker_client, container)  # the command was killed with its container
    listing = asyncio.run(shell.invoke("run_shell", {"script": SLEEPERS}))
    assert listing["stdout"] == "0\n"


def test_a_deadline_already_passed_starts_nothing(shell: ShellExec) -> None:
    with pytest.raises(CallTimeoutError, match="deadline passed"):
        asyncio.run(_within(0, shell, {"script": "echo never"}))
    assert _container(shell) is None


def test_two_calls_at_their_deadline_do_not_block_a_third(shell: ShellExec) -> None:
    async def scenario() -> tuple[list[str], list[Any]]:
        # Three overlapping calls leave three warm containers: the quick call need not start one.
        await asyncio.gather(*(shell.invoke("run_shell", {"script": "sleep 1"}) for _ in range(3)))
        assert len(shell.sandbox_session.container_ids(shell._container_plan())) == 3
        finished: list[str] = []

        async def timed(name: str, call: Awaitable[Any]) -> Any:
            result = await call
            finished.append(name)
            return result

        results = await asyncio.gather(
            timed("slow 1", _within(2, shell, SLOW)),
            timed("slow 2", _within(2, shell, SLOW)),
            timed("quick", shell.invoke("run_shell", {"script": "echo quick"})),
        )
        return finished, results

    finished, (slow_1, slow_2, quick) = asyncio.run(scenario())
    assert finished[0] == "quick"  # it ran beside the two slow calls, not after them
    assert quick["stdout"] == "quick\n" and quick["exit_code"] == 0
    assert slow_1["timed_out"] and slow_2["timed_out"]
    listing = asyncio.run(shell.invoke("run_shell", {"script": SLEEPERS}))
    assert listing["stdout"] == "0\n"


async def _fail_after(seconds: float, call: Callable[[], Awaitable[Any]]) -> Any:
    with anyio.fail_after(seconds):
        return await call()


async def _asyncio_timeout(seconds: float, call: Callable[[], Awaitable[Any]]) -> Any:
    async with asyncio.timeout(seconds):
        return await call()


@pytest.mark.parametrize("cancel_after", [_fail_after, _asyncio_timeout], ids=["anyio.fail_after", "asyncio.timeout"])
def test_a_cancelled_call_is_killed_before_the_cancellation_arrives(
    shell: ShellExec, docker_client: Any, cancel_after: Callable[..., Awaitable[Any]]
) -> None:
    asyncio.run(shell.invoke("run_shell", {"script": "true"}))
    container = _container(shell)
    assert container is not None

    async def scenario() -> bool:
        with pytest.raises(TimeoutError):
            await cancel_after(1, lambda: shell.invoke("run_shell", SLOW))
        return _exists(docker_client, container)  # looked at the moment the caller sees the timeout

    assert not asyncio.run(scenario())
    listing = asyncio.run(shell.invoke("run_shell", {"script": SLEEPERS}))
    assert listing["stdout"] == "0\n"
