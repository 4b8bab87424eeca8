"""The model loop over Colony's tools: several tools in one run, steering bad calls, refusals as text."""

from __future__ import annotations

from typing import Any

from pydantic_ai.toolsets import AbstractToolset, PreparedToolset, RenamedToolset

from colony.agents import ColonyToolset, colony_toolset, model_agent, run
from tests.colony.agents.harness import Script

TEXT = "Call Ann at 555-123-4567 or ann@example.org. The survey covered 12 miles of coast. The coast is eroding."


async def test_a_multi_step_run_uses_several_catalog_tools(make_agent: Any) -> None:
    script = Script(
        [
            [("redact_pii", {"text": TEXT})],
            [
                ("summarize_text", {"text": TEXT, "max_sentences": 1}),
                ("convert_units", {"value": 12, "from_unit": "miles", "to_unit": "km"}),
            ],
            "Done: redacted, summarized and converted.",
        ]
    )
    result = await run(make_agent(), "Prepare the report", model=script.model)
    assert result.output == "Done: redacted, summarized and converted."
    answers = dict(script.returns())
    assert (
        "[REDACTED]" in answers["redact_pii"]["redacted_text"]
        and "ann@example.org" not in answers["redact_pii"]["redacted_text"]
    )
    assert answers["summarize_text"]["summary_sentences"] == 1
    assert round(answers["convert_units"]["value"], 2) == 19.31


async def test_the_model_sees_the_menu_exactly(make_agent: Any) -> None:
    agent = make_agent(tool_overrides={"tool:unit_convert": {"name": "to_metric", "description": "Metric only."}})
    script = Script(["nothing to do"])
    await run(agent, "hi", model=script.model)
    offered = {tool.name: tool for tool in script.tools}
    menu = {entry.name: entry for entry in agent.menu()}
    assert set(offered) == set(menu)
    for name, entry in menu.items():
        assert offered[name].description == entry.description
        assert offered[name].parameters_json_schema == entry.input_schema
    assert offered["to_metric"].description == "Metric only."
    assert "convert_units" not in offered
    # Args: descriptions reach the model, and a governed action asks for the gate's case.
    assert (
        offered["redact_pii"].parameters_json_schema["properties"]["text"]["description"] == "Text to redact PII from"
    )
    assert {"rationale", "rollback_plan", "evidence"} <= set(
        offered["write_entry"].parameters_json_schema["properties"]
    )
    assert "rationale" not in offered["redact_pii"].parameters_json_schema["properties"]


def test_the_overrides_are_pydantic_ai_wrappers_around_one_colony_leaf(make_agent: Any) -> None:
    agent = make_agent(tool_overrides={"tool:unit_convert": {"name": "to_metric"}})
    offered = colony_toolset(agent)
    assert isinstance(offered, RenamedToolset) and offered.name_map == {"to_metric": "convert_units"}
    assert isinstance(offered.wrapped, PreparedToolset) and isinstance(offered.wrapped.wrapped, ColonyToolset)
    leaves: list[AbstractToolset[Any]] = []
    toolsets = model_agent(agent, model=Script([]).model).toolsets
    [ours] = [toolset for toolset in toolsets if isinstance(toolset, RenamedToolset)]
    ours.apply(leaves.append)
    assert [type(leaf) for leaf in leaves] == [ColonyToolset]  # what durable execution would wrap
    assert leaves[0].id == "colony-clerk-1"


async def test_a_renamed_tool_is_served_under_its_override_name(make_agent: Any) -> None:
    agent = make_agent(tool_overrides={"tool:unit_convert": {"name": "to_metric"}})
    script = Script([[("to_metric", {"value": 1, "from_unit": "km", "to_unit": "m"})], "ok"])
    await run(agent, "convert", model=script.model)
    assert script.returns() == [("to_metric", {"value": 1000.0, "from_unit": "km", "to_unit": "m"})]


async def test_a_bad_argument_is_steered_and_corrected(make_agent: Any) -> None:
    script = Script(
        [
            [("convert_units", {"value": "ten", "from_unit": "miles"})],
            [("convert_units", {"value": 10, "from_unit": "miles", "to_unit": "km"})],
            "converted",
        ]
    )
    result = await run(make_agent(), "convert", model=script.model)
    assert result.output == "converted"
    (name, retry), (_, answer) = script.returns()
    assert name == "convert_units"
    assert "value" in str(retry) and "to_unit" in str(retry)
    assert round(answer["value"], 2) == 16.09


async def test_on_the_last_allowed_attempt_the_steer_is_the_answer_and_the_run_goes_on(make_agent: Any) -> None:
    agent = make_agent(tool_retries={"tool:unit_convert": 1})
    bad = ("convert_units", {"value": 3, "from_unit": "parsecs", "to_unit": "km"})
    script = Script([[bad], [bad], "I could not convert parsecs."])
    result = await run(agent, "convert", model=script.model)
    assert result.output == "I could not convert parsecs."
    (_, first), (_, second) = script.returns()
    assert "from_unit" in first and first == second  # the same text: a retry prompt, then the answer
    [retried, answered] = [
        part for message in script.seen for part in getattr(message, "parts", []) if part.part_kind == "tool-return"
    ]
    assert (retried.outcome, answered.outcome) == ("retried", "success")


async def test_the_retry_budget_is_per_tool(make_agent: Any) -> None:
    agent = make_agent(tool_retries={"tool:unit_convert": 0}, default_retries=3)
    entries = {entry.name: agent.retries(entry) for entry in agent.menu()}
    assert entries["convert_units"] == 0 and entries["redact_pii"] == 3
    bad = ("convert_units", {"value": 3})
    script = Script([[bad], "gave up"])
    result = await run(agent, "convert", model=script.model)  # no retry left: the first steer is the answer
    assert result.output == "gave up"
    assert "to_unit" in script.returns()[0][1]
