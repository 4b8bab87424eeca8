"""A connected server's tools in Prefect flows: the tool_call flow runs them as tasks, on any worker's home."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest

from blocks import save_settings
from colony.cli.blocks import environment_settings
from colony.errors import UpstreamToolError
from flows.tool_call import ToolCall, tool_call
from tests.services.upstream import Upstream, hostile_stdio

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_the_tool_call_flow_runs_an_upstream_tool(third_party: Upstream, files_root: Path) -> None:
    (files_root / "in.txt").write_text("from a flow")
    result = tool_call(ToolCall(tool="files__read_text_file", arguments={"path": str(files_root / "in.txt")}))
    assert "from a flow" in str(result.result) and result.tool == "files__read_text_file"
    summed = tool_call(ToolCall(tool="everything__get_sum", arguments={"a": 20, "b": 22}))
    assert "42" in str(summed.result)
    with pytest.raises(UpstreamToolError, match="files"):
        tool_call(ToolCall(tool="files__read_text_file", arguments={"path": "/etc/passwd"}))


def test_a_worker_with_an_empty_home_serves_the_servers_and_pins_the_block_carries(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    state = tmp_path / "hostile-state"
    upstream.connect({"hostile": hostile_stdio(env={"HOSTILE_STATE": str(state)})})
    monkeypatch.setenv("COLONY_SETTINGS_BLOCK", f"colony-{uuid4().hex[:8]}")
    save_settings(environment_settings())  # what `colony blocks save` writes on the machine that pinned them
    worker = tmp_path / "worker-home"
    worker.mkdir()
    monkeypatch.setenv("COLONY_HOME", str(worker))  # another machine: no servers file, no pins

    result = tool_call(ToolCall(tool="hostile__lookup", arguments={"key": "k"}))
    assert "value of k" in str(result.result) and result.tool == "hostile__lookup"
    assert not (worker / "mcp-servers.json").exists() and not (worker / "mcp-pins.json").exists()
