"""The official MCP client against ``colony mcp`` over stdio, as a real subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from colony.surfaces.definitions import served_definition
from tests.colony.surfaces.sample_tools import sample_repo
from tests.colony.surfaces.seed001 import KERNEL_TOOLS, call, exercise_bad_arguments, exercise_seed_examples
from tools.unit_convert import UnitConvert

REPO_ROOT = Path(__file__).resolve().parents[3]
COLONY = str(Path(sys.executable).parent / "colony")


def stdio_server(home: Path, *args: str, **env: str) -> StdioServerParameters:
    environment = {**os.environ, "COLONY_HOME": str(home), "PYTHONPATH": str(REPO_ROOT), **env}
    return StdioServerParameters(command=COLONY, args=["mcp", *args], env=environment)


@pytest.mark.slow
async def test_seed_examples_and_bad_arguments_over_stdio(colony_home: Path) -> None:
    async with Client(stdio_server(colony_home)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        await exercise_seed_examples(client)
        await exercise_bad_arguments(client)
        with pytest.raises(MCPError, match="unknown tool 'no_such_tool'"):
            await client.call_tool("no_such_tool", {})
        answer, failed = await call(client, "unit_convert", {"value": 100, "from_unit": "c", "to_unit": "f"})
        assert (answer["value"], failed) == (212.0, False)
    assert set(KERNEL_TOOLS) | {"unit_convert", "jsonschema_validate", "doc_summarize"} <= set(tools)
    convert = tools["unit_convert"]
    assert convert.input_schema["required"] == ["value", "from_unit", "to_unit"]
    assert "agent_id" not in convert.input_schema["properties"]  # identity is not an argument
    assert convert.annotations is not None and convert.annotations.read_only_hint is True
    assert convert.annotations.destructive_hint is False and convert.annotations.idempotent_hint is True
    assert "Tool unit_convert v1.0.1" in (convert.description or "")
    assert convert.meta == {
        "colony/version": "1.0.1",
        "colony/definition_sha256": served_definition(UnitConvert).sha256,
    }
    propose = tools["colony_propose_action"]
    assert propose.input_schema["required"] == ["agent_id", "action_type", "target", "rationale", "rollback_plan"]
    assert (propose.description or "").startswith("Submit an action proposal to the Colony actuation gate.")


async def test_the_local_operator_acts_only_for_the_agent_it_names(colony_home: Path, tmp_path: Path) -> None:
    repo = sample_repo(tmp_path / "repo")
    server = stdio_server(colony_home, "--agent", "stdio-agent", COLONY_AGENT_ID="spoofed", COLONY_REPO_ROOT=str(repo))
    case = {"rationale": "Note the calibration result for the operators", "rollback_plan": "Delete the line"}
    async with Client(server) as client:
        answer, failed = await call(client, "append_note", {"note": "hello", **case})
        assert failed and answer["verdict"]["decision"] == "refuse"
        answer, failed = await call(client, "append_note", {"note": "hello", "agent_id": "named-agent", **case})
        assert failed and "agent_id" in answer["error"]  # not an argument of the tool: refused before the gate
        answer, failed = await call(client, "append_note", {"note": "hello"})
        assert failed and "rationale" in answer["error"]
        for agent, proposals in (("stdio-agent", 1), ("spoofed", 0), ("named-agent", 0)):
            profile, _ = await call(client, "colony_agent_profile", {"agent_id": agent})
            assert profile["total_proposals"] == proposals, profile
    assert not (colony_home / "notes.txt").exists()
