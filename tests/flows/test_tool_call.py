"""tool_call: one catalog tool by name, validated, cached per determinism; its result kept and shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

from colony.errors import ToolInputError, ToolUnavailableError, UnknownActionError, UnknownToolError
from flows import in_thread
from flows.tool_call import RESULT_ARTIFACT, ToolCall, ToolCallResult, tool_call
from tests.colony.surfaces.broken_tools import MISSING_CLASS, REASONS, broken_repo

pytestmark = pytest.mark.usefixtures("prefect_harness")
MILES = {"value": 10, "from_unit": "miles", "to_unit": "km"}


def test_a_catalog_tool_runs_and_its_repeat_is_a_cache_hit() -> None:
    first = tool_call(ToolCall(tool="unit_convert", arguments=MILES))
    second = tool_call(ToolCall(tool="unit_convert", action="convert_units", arguments=MILES))
    assert first.result == {"value": 16.0934, "from_unit": "miles", "to_unit": "km"}
    assert (first.cached, second.cached) == (False, True)
    assert (second.tool, second.version, second.action) == ("unit_convert", "1.0.1", "convert_units")


def test_a_tool_double_runs_by_import_path() -> None:
    result = tool_call(ToolCall(tool="echo_double", arguments={"text": "hi"}))
    assert result.result == {"text": "hi"}


def test_bad_arguments_fail_the_run_naming_each_field() -> None:
    with pytest.raises(ToolInputError) as raised:
        tool_call(ToolCall(tool="unit_convert", arguments={"value": "ten", "from_unit": "km", "extra": 1}))
    assert sorted(error.field for error in raised.value.errors) == ["extra", "to_unit", "value"]


def test_unknown_tools_and_actions_are_named() -> None:
    with pytest.raises(UnknownToolError, match="unknown tool 'nope'"):
        tool_call(ToolCall(tool="nope"))
    with pytest.raises(UnknownActionError, match="no action 'fly'"):
        tool_call(ToolCall(tool="unit_convert", action="fly"))


def test_a_broken_catalog_entry_fails_its_own_runs_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(broken_repo(tmp_path)))
    assert tool_call(ToolCall(tool="unit_convert", arguments=MILES)).result["value"] == 16.0934
    with pytest.raises(ToolUnavailableError, match=f"tool '{MISSING_CLASS}' is unavailable") as raised:
        tool_call(ToolCall(tool=MISSING_CLASS))
    assert REASONS[MISSING_CLASS] in raised.value.reason


async def test_async_agent_code_awaits_the_flow() -> None:
    result = await in_thread(tool_call, ToolCall(tool="unit_convert", arguments={**MILES, "value": 1}))
    assert result.result["value"] == 1.6093


def test_the_result_is_the_runs_result_and_an_artifact(colony_home: Path) -> None:
    state = tool_call(ToolCall(tool="unit_convert", arguments={**MILES, "value": 3}), return_state=True)
    assert state.is_completed()
    with get_client(sync_client=True) as client:  # read back through the API, as another process would
        stored = client.read_flow_run(state.state_details.flow_run_id).state
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=[RESULT_ARTIFACT]),
                flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]),
            )
        )
    assert stored is not None and stored.message == "unit_convert.convert_units 1.0.1"
    result = stored.result()
    assert isinstance(result, ToolCallResult) and result.result["value"] == 4.828
    assert isinstance(artifact.data, str) and '"value": 4.828' in artifact.data
    record = json.loads(Path(stored.data.storage_key).read_text())  # type: ignore[union-attr]
    assert record["metadata"]["serializer"]["type"] == "json"
    assert Path(stored.data.storage_key).parent == colony_home / "results"  # type: ignore[union-attr]
