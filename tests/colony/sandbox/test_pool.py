"""Overlapping calls get containers of their own up to the role's limit; past it they wait, until their deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from colony.callers import CURRENT_CALLER
from colony.deadlines import deadline_scope
from colony.errors import SandboxError
from colony.sandbox import ImageRole, SandboxConfig, SandboxSession
from colony.sandbox.config import DEFAULT_ROLES
from tests.colony.sandbox.conftest import TightShell, container_of, run


@pytest.fixture
def single(busybox_image: str) -> Iterator[TightShell]:
    """A TightShell whose role allows one container at a time."""
    role = ImageRole(image=DEFAULT_ROLES["busybox"].image, max_containers=1)
    tool = TightShell(session=SandboxSession(SandboxConfig(roles={"busybox": role})))
    yield tool
    asyncio.run(tool.shutdown())


def _ids(tool: TightShell) -> list[str]:
    return tool.sandbox_session.container_ids(tool._container_plan())


async def _script(tool: TightShell, script: str) -> Any:
    """Run a script with room for a container start on a loaded machine (the timeout covers it)."""
    return await tool._exec_in_sandbox(["sh", "-c", script], timeout_seconds=30)


def test_sequential_calls_share_one_container(fresh_shell: TightShell) -> None:
    for _ in range(3):
        run(fresh_shell, "true")
    assert len(_ids(fresh_shell)) == 1


def test_overlapping_calls_run_side_by_side_in_containers_of_their_own(fresh_shell: TightShell) -> None:
    async def overlap() -> list[Any]:
        return await asyncio.gather(*(_script(fresh_shell, "sleep 1; hostname") for _ in range(2)))

    first, second = asyncio.run(overlap())
    assert first["exit_code"] == second["exit_code"] == 0
    assert first["stdout"] != second["stdout"]  # two containers (hostnames differ)
    assert len(_ids(fresh_shell)) == 2


def test_a_full_role_makes_the_next_call_wait_its_turn(single: TightShell) -> None:
    async def both() -> list[Any]:
        return await asyncio.gather(_script(single, "sleep 1; echo first"), _script(single, "echo second"))

    first, second = asyncio.run(both())
    assert (first["stdout"], second["stdout"]) == ("first\n", "second\n")
    assert len(_ids(single)) == 1


async def held(tool: TightShell) -> None:
    """Until a call holds the tool's one container (bounded: 60 s)."""
    pool, plan = tool.sandbox_session._held.pool, tool._container_plan()
    for _ in range(600):
        if sum(pool.plans.holding.get(plan, {}).values()):
            return
        await asyncio.sleep(0.1)
    pytest.fail("no call ever held the container")


def test_waiting_past_the_deadline_is_a_retryable_error(single: TightShell) -> None:
    run(single, "true")

    async def scenario() -> Any:
        busy = asyncio.create_task(_script(single, "sleep 2; echo done"))
        await held(single)
        with pytest.raises(SandboxError, match="stayed busy") as raised, deadline_scope(0.5):
            await single.invoke("run", {"script": "echo never"})
        assert raised.value.retryable
        return await busy

    assert asyncio.run(scenario())["stdout"] == "done\n"


def test_a_caller_cancelled_while_waiting_leaves_the_running_call_alone(single: TightShell) -> None:
    run(single, "true")
    container = container_of(single)

    async def scenario() -> Any:
        busy = asyncio.create_task(_script(single, "sleep 2; echo done"))
        await held(single)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(single.invoke("run", {"script": "echo never"}), 0.5)
        return await busy

    assert asyncio.run(scenario())["stdout"] == "done\n"
    assert container_of(single) == container  # nothing was killed or replaced


def test_callers_waiting_are_served_in_turn_not_in_a_race(single: TightShell) -> None:
    """One container, one call at a time: bob's one call comes between alice's, not after all of them."""
    pool = single.sandbox_session._held.pool
    plan = single._container_plan()
    order: list[str] = []

    async def call(caller: str, name: str) -> None:
        CURRENT_CALLER.set(caller)  # what Runtime.call does; each task has a context of its own
        answer = await _script(single, f"sleep 1; echo {name}")
        order.append(answer["stdout"].strip())

    async def queued(waiting: dict[str | None, int]) -> None:
        for _ in range(600):  # until the pool holds these waiting calls (bounded: 60 s)
            queues = pool.plans.waiting.get(plan, {})
            if {caller: len(queue) for caller, queue in queues.items()} == waiting:
                return
            await asyncio.sleep(0.1)
        pytest.fail(f"the pool never held {waiting}")

    async def scenario() -> None:
        tasks = [asyncio.create_task(call("alice", "a0"))]
        while not pool.ids(plan) and not order:
            await asyncio.sleep(0.1)  # a0 holds the container
        tasks.append(asyncio.create_task(call("alice", "a1")))
        await queued({"alice": 1})
        tasks.append(asyncio.create_task(call("alice", "a2")))
        await queued({"alice": 2})
        tasks.append(asyncio.create_task(call("bob", "b0")))
        await queued({"alice": 2, "bob": 1})
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
    assert order == ["a0", "a1", "b0", "a2"]


def test_a_callers_share_is_all_but_one_container_unless_set() -> None:
    assert ImageRole(image="x", max_containers=4).caller_share == 3
    assert ImageRole(image="x", max_containers=1).caller_share == 1
    assert ImageRole(image="x", max_containers=4, max_containers_per_caller=4).caller_share == 4
    assert ImageRole(image="x", max_containers=2, max_containers_per_caller=8).caller_share == 2
