"""The local tool host: timeouts, foreign failures, argument caps, reserved names, the seed's catalog records."""

from __future__ import annotations

import pytest

from colony.catalog import ToolEntry
from colony.errors import CallTimeoutError, CatalogError, PayloadTooLargeError, ToolExecutionError, ToolInputError
from colony.surfaces.toolhost import LocalToolHost

MODULE = "tests.colony.surfaces.sample_tools"


def host(*names: str, timeout: float = 0.3, cap: int = 1024) -> LocalToolHost:
    classes = {"sleeper": "Sleeper", "async_sleeper": "AsyncSleeper", "impostor": "Impostor"}
    entries = {
        name: ToolEntry(
            name=name, capability="sleep" if "sleep" in name else "act", capability_fqn=f"{MODULE}.{classes[name]}"
        )
        for name in names
    }
    return LocalToolHost(entries, timeout_seconds=timeout, max_argument_bytes=cap)


@pytest.mark.parametrize("name", ["sleeper", "async_sleeper"])
async def test_a_slow_tool_times_out(name: str) -> None:
    tools = host(name)
    assert (await tools.call(name, {"seconds": 0.01})).result == {"slept": 0.01}
    with pytest.raises(CallTimeoutError, match=rf"{name} did not finish within 0\.3 s"):
        await tools.call(name, {"seconds": 2})


async def test_a_tools_own_bug_is_an_execution_error() -> None:
    with pytest.raises(ToolExecutionError, match="sleeper failed: RuntimeError: boom"):
        await host("sleeper").call("sleeper", {"seconds": 0, "explode": True})


async def test_arguments_must_be_a_small_json_object() -> None:
    tools = host("sleeper", cap=64)
    with pytest.raises(ToolInputError, match="must be a JSON object, got list"):
        await tools.call("sleeper", [0.1])
    with pytest.raises(PayloadTooLargeError, match="the cap is 64 bytes"):
        await tools.call("sleeper", {"seconds": 0, "padding": "x" * 100})


def test_a_tool_may_not_take_the_callers_reserved_names() -> None:
    with pytest.raises(CatalogError, match=r"\['agent_id'\] are reserved"):
        host("impostor").tools()


def test_a_pure_cheap_tool_runs_inline_and_an_undeclared_cost_does_not() -> None:
    repository = LocalToolHost()
    assert repository.tool("unit_convert").runs_inline
    assert not host("sleeper").tool("sleeper").runs_inline
