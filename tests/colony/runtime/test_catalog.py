"""The runtime's catalog follows the registry file: new tools appear, removed ones stop being callable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from colony import LocalToolCapability, ToolSpec, action_executor
from colony.agents import AgentSpec, assemble
from colony.errors import ToolUnavailableError, UnknownToolError
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


def test_a_registry_file_that_no_longer_loads_keeps_the_last_good_catalog_and_says_why(tmp_path: Path) -> None:
    path = write_registry(tmp_path, ["unit_convert"])
    catalog = Catalog(path)
    path.write_text('{"version": 1, "tools": [{"name": "x", "capability_fqn": "no.such.Module"}, {"name": "x"}]}')
    assert catalog.refresh(force=True) is False
    assert set(catalog.tools) == {"unit_convert"}
    assert catalog.reload_error is not None and "('x'): the name is listed twice" in catalog.reload_error


def broken_entries(path: Path, entries: dict[str, tuple[str, str]]) -> None:
    """Add ``entries`` (name: capability, capability_fqn) to the registry file at ``path``."""
    document = json.loads(path.read_text())
    document["tools"] += [{"name": n, "capability": c, "capability_fqn": f} for n, (c, f) in entries.items()]
    path.write_text(json.dumps(document))


def test_a_broken_entry_fails_alone_logged_once_and_refused_saying_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_registry(tmp_path, ["unit_convert"])
    broken_entries(
        path,
        {
            "missing_module": ("x", "tools.nowhere.Missing"),
            "missing_class": ("convert_units", "tools.unit_convert.Missing"),
            "raises_at_import": ("x", "tests.colony.surfaces.raises_at_import.Tool"),
            "mismatched": ("teleport", "tools.unit_convert.UnitConvert"),
        },
    )
    catalog = Catalog(path)
    assert set(catalog.tools) == {"unit_convert"}
    reasons = {name: tool.reason for name, tool in catalog.unavailable.items()}
    assert reasons == {
        "missing_module": "'missing_module' (tools.nowhere.Missing): cannot import 'tools.nowhere': "
        "No module named 'tools.nowhere'",
        "missing_class": "'missing_class' (tools.unit_convert.Missing): module 'tools.unit_convert' has no "
        "'Missing'; it does not name a ToolCapability subclass",
        "raises_at_import": "'raises_at_import' (tests.colony.surfaces.raises_at_import.Tool): importing "
        "'tests.colony.surfaces.raises_at_import' raised RuntimeError: the tool's settings file is missing",
        "mismatched": "'mismatched': capability 'teleport' is not in UnitConvert.spec.capabilities ['convert_units']",
    }
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 4 and all("is unavailable (the others still serve)" in line for line in warnings)
    with pytest.raises(ToolUnavailableError, match=r"tool 'missing_class' is unavailable.*has no 'Missing'") as raised:
        catalog.resolve("missing_class")
    assert (raised.value.tool, raised.value.reason) == ("missing_class", reasons["missing_class"])
    assert catalog.resolve("unit_convert").cls.spec.name == "unit_convert"

    caplog.clear()
    assert catalog.refresh(force=True) is False  # the same failures: nothing changed, nothing logged again
    broken_entries(path, {"also_missing": ("x", "tools.unit_convert.AlsoMissing")})
    assert catalog.refresh(force=True) is True
    assert [record.getMessage().split(" is ")[0] for record in caplog.records] == ["catalog tool 'also_missing'"]
    assert catalog.reload_error is None and set(catalog.unavailable) == {*reasons, "also_missing"}


def test_a_tool_that_breaks_on_reload_is_refused_and_one_fixed_serves_again(tmp_path: Path) -> None:
    path = write_registry(tmp_path, ["unit_convert", "sleeper"])
    catalog = Catalog(path)
    document = json.loads(path.read_text())
    sleeper = next(entry for entry in document["tools"] if entry["name"] == "sleeper")
    sleeper["capability_fqn"] += "Gone"
    path.write_text(json.dumps(document))
    assert catalog.refresh(force=True) is True
    assert (set(catalog.tools), set(catalog.unavailable)) == ({"unit_convert"}, {"sleeper"})
    with pytest.raises(ToolUnavailableError, match="SleeperGone"):
        catalog.resolve("sleeper")
    write_registry(tmp_path, ["unit_convert", "sleeper"])
    assert catalog.refresh(force=True) is True
    assert (set(catalog.tools), dict(catalog.unavailable)) == ({"unit_convert", "sleeper"}, {})


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
