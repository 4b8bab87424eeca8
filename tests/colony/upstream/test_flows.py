"""A connected server's tools in Prefect flows: the tool_call flow runs them as tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.errors import UpstreamToolError
from flows.tool_call import ToolCall, tool_call
from tests.services.upstream import Upstream

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_the_tool_call_flow_runs_an_upstream_tool(third_party: Upstream, files_root: Path) -> None:
    (files_root / "in.txt").write_text("from a flow")
    result = tool_call(ToolCall(tool="files__read_text_file", arguments={"path": str(files_root / "in.txt")}))
    assert "from a flow" in str(result.result) and result.tool == "files__read_text_file"
    summed = tool_call(ToolCall(tool="everything__get_sum", arguments={"a": 20, "b": 22}))
    assert "42" in str(summed.result)
    with pytest.raises(UpstreamToolError, match="files"):
        tool_call(ToolCall(tool="files__read_text_file", arguments={"path": "/etc/passwd"}))
