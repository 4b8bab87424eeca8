"""The colony_* tools as data, and their failures as the seed's error results."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony.errors import ColonyError, KernelInputError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, KernelProvider
from colony.surfaces.kernel_tools import call_kernel_tool, kernel_tools, run_kernel_tool
from tests.colony.surfaces.seed001 import KERNEL_TOOLS


def test_the_seed_tools_in_the_seed_order() -> None:
    tools = kernel_tools()
    assert list(tools) == KERNEL_TOOLS
    assert tools["colony_pheromone_query"].structured_output_schema is None  # the seed answers with a list
    assert tools["colony_status"].structured_output_schema is not None


def test_a_store_that_cannot_open_is_an_error_result(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLONY_DATABASE_URL", f"sqlite:///{tmp_path}/missing-directory/kernel.db")
    answer = run_kernel_tool(KernelProvider(), "colony_status", {}, LOCAL_OPERATOR)
    assert set(answer) == {"error"} and answer["error"]
    with pytest.raises(ColonyError) as raised:
        call_kernel_tool(KernelProvider(), "colony_status", {}, LOCAL_OPERATOR)
    assert str(raised.value) == answer["error"]


def test_a_refusal_is_raised_with_its_fields_for_the_surfaces_to_render() -> None:
    with pytest.raises(KernelInputError) as raised:
        call_kernel_tool(KernelProvider(), "colony_agent_profile", {"agent_id": 7}, LOCAL_OPERATOR)
    assert raised.value.fields == ["agent_id"]


def test_every_tool_has_a_title_and_annotations() -> None:
    for tool in kernel_tools().values():
        assert tool.title and tool.version == "1.3.1"
        assert set(tool.annotations) == {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        assert tool.annotations["title"] == tool.title


def test_arguments_are_checked_before_the_kernel_is_opened() -> None:
    provider = KernelProvider()
    answer = run_kernel_tool(provider, "colony_record_outcome", {"agent_id": 3}, LOCAL_OPERATOR)
    assert set(answer) == {"error"}
    for field in ("agent_id", "action_type", "target", "actual_outcome", "tests_passed"):
        assert field in answer["error"]
    answer = run_kernel_tool(provider, "colony_record_outcome", {
        "agent_id": "a", "action_type": "t", "target": "x", "actual_outcome": "y", "tests_passed": True,
        "human_feedback": 3.0,
    }, LOCAL_OPERATOR)  # fmt: skip
    assert "human_feedback" in answer["error"]


def test_a_flood_of_wrong_arguments_names_twenty_and_counts_the_rest() -> None:
    arguments = {f"extra_{index}": index for index in range(25_000)}  # about 250 KB, under the arguments cap
    answer = run_kernel_tool(KernelProvider(), "colony_status", arguments, LOCAL_OPERATOR)
    assert answer["error"].startswith("invalid arguments for colony_status: extra_0: unknown argument; extra_1:")
    assert answer["error"].endswith("extra_19: unknown argument; and 24980 more") and len(answer["error"]) < 1000
    with pytest.raises(KernelInputError) as caught:
        call_kernel_tool(KernelProvider(), "colony_status", arguments, LOCAL_OPERATOR)
    assert [error.field for error in caught.value.errors] == [f"extra_{index}" for index in range(20)]


def test_a_shared_kernel_answers(colony_home: Path) -> None:
    provider = KernelProvider(ColonyKernel.from_env())
    profile = run_kernel_tool(provider, "colony_agent_profile", {"agent_id": "kt-agent"}, LOCAL_OPERATOR)
    assert (profile["agent_id"], profile["role"], profile["trust_score"]) == ("kt-agent", "sandbox", 0.1)


def test_the_served_descriptions_say_what_the_tools_do() -> None:
    """A report with an authorization is linked to its verdict; pruning counts deposits and finds copies."""
    tools = kernel_tools()
    record = tools["colony_record_outcome"]
    assert "does not link" not in record.description and "authorization" in record.description
    provider = KernelProvider(ColonyKernel(KernelSettings(database_url="sqlite://")))
    report = {"agent_id": "a", "action_type": "run_tests", "actual_outcome": "ok", "tests_passed": True}
    for target in ("pkg.parser", "pkg.parser_copy", "pkg.parser_copy"):
        run_kernel_tool(provider, "colony_record_outcome", report | {"target": target}, LOCAL_OPERATOR)
    [copy] = run_kernel_tool(provider, "colony_pruning_report", {}, LOCAL_OPERATOR)["candidates"]
    assert (copy["module_path"], copy["call_count"], copy["duplicate_of"]) == ("pkg.parser_copy", 2, "pkg.parser")
    served = tools["colony_pruning_report"].output_schema["properties"]["candidates"]["items"]["properties"]
    assert "always null" not in served["duplicate_of"]["description"].lower()
    assert "uses 1" not in served["call_count"]["description"] and "deposits" in served["call_count"]["description"]
