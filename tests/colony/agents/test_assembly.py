import asyncio
import json

import pytest

from colony import LocalToolCapability, ToolSpec, action_executor
from colony.agents import AgentSpec, assemble, load_agent_spec
from colony.errors import AgentSpecError, ColonyError, ToolUnavailableError, UnknownToolError
from colony.runtime import Catalog, Runtime
from tests.colony.surfaces.broken_tools import MISSING_CLASS, RAISES_AT_IMPORT, REASONS, broken_repo


class StuckTool(LocalToolCapability):
    """Answers, but cannot be shut down (a container that will not stop)."""

    spec = ToolSpec(name="stuck_tool", capabilities=("answer",))

    @action_executor
    def answer(self) -> dict[str, bool]:
        """Answer.

        Returns:
            {"ok": true}.
        """
        return {"ok": True}

    async def shutdown(self) -> None:
        """Fail, as a stuck container does."""
        raise RuntimeError("container will not stop")


def spec(**overrides):
    return AgentSpec(**{"name": "engineer-1", "capabilities": ("unit_convert",), **overrides})


def test_menu_is_what_the_model_sees():
    menu = {entry.name: entry for entry in assemble(spec()).menu()}
    assert set(menu) == {"check_preconditions", "convert_units"}
    convert = menu["convert_units"]
    assert convert.input_schema["required"] == ["value", "from_unit", "to_unit"]
    assert "Tool unit_convert v1.0.1" in convert.description
    assert convert.needs_approval is False


def test_an_agent_names_catalog_tools_only():
    with pytest.raises(AgentSpecError, match="an agent names catalog tools only"):
        assemble(spec(capabilities=("tools.unit_convert.UnitConvert",)))
    agent = assemble(spec())
    assert (agent.principal.agent_id, agent.principal.operator) == ("engineer-1", False)
    assert agent.principal.capabilities == {"tool:unit_convert"}


def test_an_agent_naming_a_tool_whose_entry_failed_to_load_does_not_assemble(tmp_path):
    runtime = Runtime(Catalog(broken_repo(tmp_path) / ".colony" / "tool-registry.json"))
    agent = assemble(spec(), runtime)  # the broken entries do not touch an agent that does not name them
    assert set(agent.available_tools) == {"unit_convert"}
    for name in (MISSING_CLASS, RAISES_AT_IMPORT):
        with pytest.raises(
            ToolUnavailableError, match=f"agent 'engineer-1' cannot start: tool '{name}' is unavailable"
        ):
            assemble(spec(capabilities=("unit_convert", name)), runtime)
    with pytest.raises(ToolUnavailableError) as raised:
        assemble(spec(capabilities=(RAISES_AT_IMPORT,)), runtime)
    assert (raised.value.tool, REASONS[RAISES_AT_IMPORT] in raised.value.reason) == (RAISES_AT_IMPORT, True)


def test_override_renames_and_rewords_by_tool_id():
    agent = assemble(
        spec(tool_overrides={"tool:unit_convert": {"name": "to_metric", "description": "Metric only, please."}})
    )
    menu = {entry.name: entry for entry in agent.menu()}
    assert menu["to_metric"].description == "Metric only, please."
    assert asyncio.run(agent.call("to_metric", {"value": 1, "from_unit": "km", "to_unit": "m"}))["value"] == 1000.0


def test_operator_approval_beats_side_effecting():
    agent = assemble(spec(tool_approval={"tool:unit_convert.convert_units": "required", "tool:unit_convert": "never"}))
    menu = {entry.name: entry for entry in agent.menu()}
    assert menu["convert_units"].needs_approval is True
    assert menu["check_preconditions"].needs_approval is False


def test_a_tool_level_approval_never_governs_a_read():
    agent = assemble(spec(capabilities=["shell_exec"], tool_approval={"tool:shell_exec": "required"}))
    menu = {entry.name: entry for entry in agent.menu()}
    assert menu["run_shell"].needs_approval is True and agent.governed(menu["run_shell"])
    reads = menu["check_preconditions"]
    assert reads.needs_approval is False and not agent.governed(reads)
    assert "rationale" not in reads.input_schema["properties"]
    with pytest.raises(AgentSpecError, match=r"tool_approval names 'tool:unit_convert', whose actions only read"):
        assemble(spec(tool_approval={"tool:unit_convert": "required"}))


def test_override_of_a_tool_the_agent_lacks_is_an_error():
    with pytest.raises(AgentSpecError, match=r"tool_overrides names \['tool:pii_redact'\]"):
        assemble(spec(tool_overrides={"tool:pii_redact": {"name": "x"}}))
    with pytest.raises(AgentSpecError, match="tool_approval names"):
        assemble(spec(tool_approval={"tool:unit_convert.teleport": "required"}))


def test_override_creating_a_name_clash_is_an_error_when_assembled():
    with pytest.raises(AgentSpecError, match="two actions the name"):
        assemble(spec(tool_overrides={"tool:unit_convert": {"name": "check_preconditions"}}))


def test_mounting_a_tool_twice_is_an_error():
    twice = r"agent 'engineer-1' mounts a capability twice: \['tool:unit_convert', 'tool:unit_convert'\]"
    with pytest.raises(AgentSpecError, match=twice):
        assemble(spec(capabilities=("unit_convert", "unit_convert")))


def test_a_tool_that_fails_to_shut_down_is_an_error_naming_the_agent_and_the_tool(tmp_path):
    registry = tmp_path / ".colony" / "tool-registry.json"
    registry.parent.mkdir()
    entry = {"name": "stuck_tool", "capability": "answer", "capability_fqn": f"{__name__}.StuckTool"}
    registry.write_text(json.dumps({"version": 1, "tools": [entry]}))
    agent = assemble(spec(capabilities=("stuck_tool",)), Runtime(Catalog(registry)))
    assert asyncio.run(agent.call("answer")) == {"ok": True}  # the runtime now holds an instance
    failed = r"agent 'engineer-1': 1 tool shutdown\(s\) failed: stuck_tool: RuntimeError: container will not stop"
    with pytest.raises(ColonyError, match=failed):
        asyncio.run(agent.shutdown())


def test_unknown_capability_and_unknown_action():
    with pytest.raises(AgentSpecError, match="unknown tool 'teleporter'"):
        assemble(spec(capabilities=("teleporter",)))
    with pytest.raises(UnknownToolError, match="has no action 'fly'"):
        asyncio.run(assemble(spec()).call("fly", {}))


def test_spec_files_yaml_and_json(tmp_path):
    yaml_file = tmp_path / "agent.yaml"
    yaml_file.write_text("name: a\ncapabilities: [unit_convert]\ntool_approval:\n  tool:unit_convert: required\n")
    assert load_agent_spec(yaml_file).tool_approval["tool:unit_convert"] == "required"
    json_file = tmp_path / "agent.json"
    json_file.write_text(json.dumps({"name": "b", "capabilities": ["unit_convert"]}))
    assert load_agent_spec(json_file).name == "b"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: a\n", "capabilities: required argument is missing"),
        ("name: a\ncapabilities: []\n", "capabilities: .*at least 1"),
        ("name: a\ncapabilities: [x]\ntool_approval: {tool:x: sometimes}\n", r"tool_approval.tool:x"),
        ("name: [unclosed\n", "cannot read agent spec"),
    ],
)
def test_bad_spec_file_names_file_and_field(tmp_path, text, message):
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    with pytest.raises(AgentSpecError, match=message) as caught:
        load_agent_spec(path)
    assert str(path) in str(caught.value)


def test_tool_approval_required_opens_an_approval_request_and_the_approved_call_runs_once():
    from colony.kernel import ColonyKernel
    from colony.runtime import CallStatus

    kernel = ColonyKernel.from_env()
    kernel.set_trust("engineer-1", 0.8)
    agent = assemble(spec(tool_approval={"tool:unit_convert.convert_units": "required"}))
    arguments = {"value": 1, "from_unit": "km", "to_unit": "m"}
    case = {"rationale": "Convert the survey distance for the nightly report", "rollback_plan": "nothing to undo"}
    outcome = asyncio.run(agent.outcome("convert_units", arguments, **case))
    assert outcome.status is CallStatus.HELD and outcome.approval is not None
    approval_id = outcome.approval["approval_id"]
    assert [a.approval_id for a in kernel.list_approvals(agent_id="engineer-1")] == [approval_id]
    kernel.approve(approval_id, "ops@example.org", "")
    done = asyncio.run(agent.outcome("convert_units", arguments, approval_id=approval_id))
    assert done.status is CallStatus.EXECUTED and done.result["value"] == 1000.0
    kernel.close()
