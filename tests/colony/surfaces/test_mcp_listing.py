"""What tools/list serves: titles, _meta, portable schemas, no identity argument, governed output declared."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from mcp_types import Tool

from colony.kernel import ColonyKernel, ProposeActionRequest, RecordOutcomeRequest
from colony.runtime import LOCAL_OPERATOR, Catalog, Principal
from colony.surfaces.definitions import kernel_definition, served_definition
from colony.surfaces.kernel_tools import kernel_tools
from colony.surfaces.mcp.listing import approval_listing, catalog_listing, kernel_listing
from colony.surfaces.portable_schema import portability_problems
from tests.colony.surfaces.sample_tools import AppendNote
from tests.colony.surfaces.seed001 import KERNEL_TOOLS
from tools.unit_convert import UnitConvert


def repository_tools() -> list[Tool]:
    return catalog_listing(tool.cls for tool in Catalog().tools.values())


def served() -> list[Tool]:
    return kernel_listing(LOCAL_OPERATOR) + approval_listing(LOCAL_OPERATOR) + repository_tools()


@pytest.mark.parametrize("tool", served(), ids=lambda tool: tool.name)
def test_every_tool_is_listed_portably_with_a_title_and_its_pin(tool: Tool) -> None:
    for schema in (tool.input_schema, tool.output_schema):
        if schema is not None:
            assert portability_problems(schema) == []
            Draft202012Validator.check_schema(schema)
            Draft7Validator.check_schema(schema)
    assert tool.input_schema["type"] == "object"
    assert tool.title and tool.annotations is not None and tool.annotations.title == tool.title
    assert tool.annotations.read_only_hint is not None and tool.annotations.open_world_hint is not None
    assert tool.meta is not None and set(tool.meta) == {"colony/version", "colony/definition_sha256"}


def test_the_kernel_tools_in_the_seed_order_at_the_seed_version() -> None:
    listed = kernel_listing(LOCAL_OPERATOR)
    assert [tool.name for tool in listed] == KERNEL_TOOLS
    writes = {tool.name for tool in listed if tool.annotations and not tool.annotations.read_only_hint}
    assert writes == {"colony_propose_action", "colony_record_outcome", "colony_tick"}
    for tool in listed:
        definition = kernel_definition(kernel_tools()[tool.name])
        assert tool.meta == {"colony/version": "1.3.1", "colony/definition_sha256": definition.sha256}
    # The seed's schemas as served: its input schemas verbatim, its nullable output field as anyOf.
    propose = next(tool for tool in listed if tool.name == "colony_propose_action")
    assert propose.input_schema == kernel_tools()["colony_propose_action"].input_schema
    report = next(tool for tool in listed if tool.name == "colony_pruning_report")
    assert report.output_schema is not None
    duplicate = report.output_schema["properties"]["candidates"]["items"]["properties"]["duplicate_of"]
    assert duplicate["anyOf"] == [{"type": "string"}, {"type": "null"}]


def test_a_principal_is_listed_only_the_kernel_operations_it_may_run() -> None:
    reader = Principal.of("reader", ["kernel:read"])
    assert [tool.name for tool in kernel_listing(reader)] == [
        name for name in KERNEL_TOOLS if name not in ("colony_propose_action", "colony_record_outcome", "colony_tick")
    ]


def test_the_approval_tools_are_listed_by_permission() -> None:
    assert [tool.name for tool in approval_listing(LOCAL_OPERATOR)] == [
        "colony_list_approvals",
        "colony_decide_approval",
    ]
    assert [tool.name for tool in approval_listing(Principal.of("reader", ["kernel:read"]))] == [
        "colony_list_approvals"
    ]
    assert approval_listing(Principal.of("converter", ["tool:unit_convert"])) == []


def test_identity_is_not_a_tool_argument_and_the_gate_reads_the_case() -> None:
    for tool in repository_tools():
        assert "agent_id" not in tool.input_schema["properties"], tool.name
    governed = served_definition(AppendNote)
    assert {"rationale", "rollback_plan", "evidence"} <= set(governed.input_schema["properties"])
    assert "agent_id" not in governed.input_schema["properties"]
    pure = served_definition(UnitConvert)
    assert not {"rationale", "rollback_plan", "evidence"} & set(pure.input_schema["properties"])


def test_a_governed_answer_from_a_real_kernel_fits_its_declared_schema(colony_home: Path) -> None:
    schema = served_definition(AppendNote).output_schema
    assert schema is not None
    kernel = ColonyKernel.from_env()
    verdict = kernel.propose_action(
        ProposeActionRequest(
            agent_id="lister",
            action_type="append_note",
            target="tool:append_note",
            rationale="Record the outcome of the nightly calibration run",
            rollback_plan="Delete the appended line",
            side_effecting=True,
        )
    )
    outcome = kernel.record_outcome(
        RecordOutcomeRequest(
            agent_id="lister", action_type="run_tests", target="x", actual_outcome="ok", tests_passed=True
        ),
        authorization=None,
    )
    answer = {
        "verdict": verdict.seed_dict(),
        "result": {"path": "notes.txt", "notes": 1},
        "outcome": outcome.model_dump(mode="json"),
    }
    Draft202012Validator(schema).validate(answer)
    Draft7Validator(schema).validate(answer)
    wrong = {**answer, "verdict": {**answer["verdict"], "decision": "maybe"}}
    assert not Draft202012Validator(schema).is_valid(wrong)
    assert not Draft202012Validator(schema).is_valid({"error": "a refusal is an error result, not an answer"})
