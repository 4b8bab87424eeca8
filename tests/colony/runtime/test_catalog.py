"""The runtime's catalog follows the registry file: new tools appear, removed ones stop being callable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from colony import LocalToolCapability, ToolSpec, action_executor
from colony.agents import AgentSpec, assemble
from colony.errors import UnknownToolError
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, Runtime
from tests.colony.runtime.conftest import ENTRIES

EXTRA = {"closing_tool": ("close_me", f"{__name__}.ClosingTool"), "wishlist": ("", "")}


def write_registry(root: Path, names: list[str]) -> Path:
    """A registry file holding ``names`` (ENTRIES, a tool that records its shutdown, a stub)."""
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    known = {**ENTRIES, **EXTRA}
    tools = [{"name": n, "capability": known[n][0], "capability_fqn": known[n][1]} for n in names]
    path.write_text(json.dumps({"version": 1, "tools": tools}))
    return path


class ClosingTool(LocalToolCapability):
    """Records its shutdown, so a test sees the pool let it go."""

    spec = ToolSpec(
        name="closing_tool", description="Answer, and remember being shut down.", capabilities=("close_me",)
    )
    shut_down: ClassVar[list[int]] = []

    @action_executor
    def close_me(self) -> dict[str, bool]:
        """Answer.

        Returns:
            {"ok": true}.
        """
        return {"ok": True}

    async def shutdown(self) -> None:
        """Remember the shutdown."""
        ClosingTool.shut_down.append(id(self))


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_changed_registry_file_is_reread_and_listeners_hear_of_it(tmp_path: Path) -> None:
    path = write_registry(tmp_path, ["unit_convert"])
    clock = Clock()
    catalog = Catalog(path, clock=clock)
    heard: list[int] = []
    catalog.on_change(lambda changed: heard.append(changed.generation))
    write_registry(tmp_path, ["unit_convert", "sleeper"])
    assert set(catalog.tools) == {"unit_convert"}  # checked at most once a second
    clock.now += 1.5
    assert set(catalog.tools) == {"unit_convert", "sleeper"}
    assert (catalog.generation, heard) == (1, [1])
    clock.now += 1.5
    assert catalog.refresh() is False  # same file: no reload, no new generation
    write_registry(tmp_path, ["sleeper"])
    clock.now += 1.5
    with pytest.raises(UnknownToolError, match="unit_convert"):
        catalog.resolve("unit_convert")
    assert (catalog.generation, heard) == (2, [1, 2])


def test_a_broken_registry_keeps_the_last_good_catalog_and_says_why(tmp_path: Path) -> None:
    path = write_registry(tmp_path, ["unit_convert"])
    catalog = Catalog(path)
    path.write_text('{"version": 1, "tools": [{"name": "x", "capability_fqn": "no.such.Module"}]}')
    assert catalog.refresh(force=True) is False
    assert set(catalog.tools) == {"unit_convert"}
    assert catalog.reload_error is not None and "no.such.Module" in catalog.reload_error


async def test_a_removed_tool_is_refused_and_its_instance_shut_down(tmp_path: Path) -> None:
    path = write_registry(tmp_path, ["unit_convert", "closing_tool"])
    runtime = Runtime(Catalog(path))
    try:
        outcome = await runtime.call(CallRequest(tool="closing_tool", arguments={}), LOCAL_OPERATOR)
        assert outcome.result == {"ok": True}
        instance = id(runtime.pool.instance(ClosingTool))
        write_registry(tmp_path, ["unit_convert"])
        before = runtime.catalog.generation
        assert await runtime.refresh() == before + 1
        assert instance in ClosingTool.shut_down
        with pytest.raises(UnknownToolError, match="closing_tool"):
            await runtime.call(CallRequest(tool="closing_tool", arguments={}), LOCAL_OPERATOR)
        assert [tool.name for tool in runtime.visible_tools(LOCAL_OPERATOR)] == ["unit_convert"]
    finally:
        await runtime.aclose()


async def test_watch_catalog_reports_each_change(tmp_path: Path) -> None:
    import anyio

    path = write_registry(tmp_path, ["unit_convert"])
    runtime = Runtime(Catalog(path))
    changed = anyio.Event()

    async def on_change() -> None:
        changed.set()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: runtime.watch_catalog(on_change, interval_seconds=0.05))
            write_registry(tmp_path, ["unit_convert", "sleeper"])
            with anyio.fail_after(10):
                await changed.wait()
            group.cancel_scope.cancel()
        assert "sleeper" in runtime.catalog.tools
    finally:
        await runtime.aclose()


def test_an_agent_sees_available_tools_change(tmp_path: Path) -> None:
    path = write_registry(tmp_path, ["unit_convert"])
    clock = Clock()
    agent = assemble(AgentSpec(name="planner", capabilities=("unit_convert",)), Runtime(Catalog(path, clock=clock)))
    assert agent.available_tools == {
        "unit_convert": {
            "purpose": "",
            "capability": "convert_units",
            "capability_fqn": "tools.unit_convert.UnitConvert",
            "version": "1.0.1",
        }
    }
    assert agent._refresh_available_tools() is False
    write_registry(tmp_path, ["wishlist", "unit_convert", "sleeper"])  # a stub is never offered
    clock.now += 1.5
    assert agent._refresh_available_tools() is True
    assert set(agent.available_tools) == {"sleeper", "unit_convert"}
