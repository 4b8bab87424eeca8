"""The Prefect surface fails closed too: tool-call runs a side-effecting tool only through the gate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from colony.errors import ActionNotExecutedError, ToolInputError, UnknownToolError
from flows.tool_call import ToolCall, tool_call

pytestmark = pytest.mark.usefixtures("prefect_harness", "catalog_with_doubles")


def test_tool_call_runs_a_side_effecting_tool_only_through_the_gate(tmp_path: Path) -> None:
    call = ToolCall(tool="ledger_double", arguments={"path": str(tmp_path / "entry"), "text": "x"})
    with pytest.raises(ToolInputError, match="rationale"):
        tool_call(call)
    with pytest.raises(ActionNotExecutedError, match="refused"):
        tool_call(call, agent_id="newcomer", rationale="Write the figures for tonight's audit trail")
    assert not (tmp_path / "entry").exists()


def test_tool_call_never_imports_a_path_from_its_input() -> None:
    sys.modules.pop("this", None)
    with pytest.raises(UnknownToolError, match=r"unknown tool 'this\.Anything'"):
        tool_call(ToolCall(tool="this.Anything"))
    assert "this" not in sys.modules
