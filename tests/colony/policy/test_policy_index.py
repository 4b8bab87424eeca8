"""The index shows Cedar less (the policies whose scopes can admit the caller, the context paths
they read) and must never decide otherwise than Cedar over every policy and the whole call."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import cedarpy
import pytest

from colony.policy import ActionFacts, CedarCall, Effect, PolicyIndex, ToolFacts, Who, call_context, compile_policies
from colony.policy.reads import context_paths, prune, reads_variable

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"anyOf": [{"type": "string"}, {"type": "null"}]},  # may be null: policies test it with ``has``
        "size": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "limits": {
            "anyOf": [
                {"type": "object", "properties": {"cpu": {"type": "integer"}, "memory": {"type": "integer"}}},
                {"type": "null"},
            ]
        },
    },
}
EMPTY: dict[str, Any] = {"path": None, "size": 0, "tags": [], "limits": None}
TOOLS = [
    ToolFacts(
        name=f"tool{number}",
        version="1.0.0",
        domain="ops",
        locality="local",
        policy_tags=(f"tag{number}",),
        actions={"run": ActionFacts(SCHEMA, side_effecting=True, governed=True)},
        primary="run",
    )
    for number in range(4)
]
POLICIES = """
permit(principal, action, resource);
forbid(principal == Agent::"alice", action == Action::"tool0.run", resource);
forbid(principal in Group::"ops", action, resource) when { context.input.size > 3 };
forbid(principal is Agent in Group::"night", action, resource) when { context.time.hour >= 22 };
forbid(principal in Agent::"bob", action, resource == Tool::"tool3")
when { context.input has limits && context.input.limits.cpu > 8 };
forbid(principal, action, resource == Tool::"tool1") when { context has input.path };
forbid(principal, action, resource in Tool::"tool2") when { context.input.tags.contains("prod") };
forbid(principal, action, resource is Tool)
when { resource.policy_tags.contains("tag3") && context.input has path && context.input.path like "/secret/*" };
@hold("bob's large jobs need a person")
permit(principal == Agent::"bob", action, resource)
when { context.input has limits && context.input.limits.memory > 100 };
forbid(principal, action in [Action::"tool1.run", Action::"tool2.run"], resource)
when { context.input has limits && context.input.limits == {"cpu": 1, "memory": 1} };
forbid(principal, action, resource) when { context.time has hour && context.time.hour == 3 };
forbid(principal, action, resource) when { resource.policy_tags.contains("tag2") && context.input.size > 4 };
forbid(principal, action, resource)
when { resource.governed && resource.domain == "ops" && principal in Group::"night" && context.input.size == 1 };
forbid(principal, action, resource) unless { resource.policy_tags.contains("tag0") || context.input.size < 100 };
"""
WHO = [
    Who(agent_id="alice"),
    Who(agent_id="alice", groups=frozenset({"ops"})),
    Who(agent_id="bob", groups=frozenset({"night"})),
    Who(agent_id="carol", groups=frozenset({"night", "ops"})),
]
INPUTS = [
    EMPTY,
    {**EMPTY, "size": 5},
    {**EMPTY, "path": "/secret/a", "size": 1},
    {**EMPTY, "tags": ["prod"], "limits": {"cpu": 9, "memory": 200}},
    {**EMPTY, "limits": {"cpu": 1, "memory": 1}},
    {**EMPTY, "size": 100},
]
HOURS = [3, 12, 23]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> PolicyIndex:
    directory = tmp_path_factory.mktemp("policies")
    (directory / "rules.cedar").write_text(POLICIES)
    return compile_policies(directory, TOOLS)


def cedar_over_everything(index: PolicyIndex, call: CedarCall) -> tuple[Effect, set[str]]:
    """What Cedar decides over every loaded policy, the whole context and every entity attribute."""
    policies = {source.id: source.policy for source in index.sources.values()}
    policy_set = cedarpy.PolicySet.from_pst(
        cedarpy.pst.PolicySet(templates={}, static_policies=policies, template_links=())
    )
    result = cedarpy.is_authorized(
        {**call.request(), "context": json.dumps(call.context)}, policy_set, json.dumps(call.entities())
    )
    satisfied = {reason for reason in result.diagnostics.reasons if reason in index.sources}
    if not result.allowed:
        return Effect.FORBID, {reason for reason in satisfied if index.sources[reason].forbids}
    holds = {reason for reason in satisfied if index.sources[reason].hold is not None}
    return (Effect.HOLD, holds) if holds else (Effect.PERMIT, set())


def test_the_index_decides_every_call_as_cedar_over_every_policy_does(index: PolicyIndex) -> None:
    seen = set()
    for who, tool, arguments, hour in itertools.product(WHO, TOOLS, INPUTS, HOURS):
        now = time.mktime((2026, 1, 5, hour, 30, 0, 0, 0, 0)) - time.timezone
        context = call_context(
            tool, "run", arguments, target=None, acted_by=None, estimate={}, above_default=False, now=now
        )
        call = CedarCall.build(who, tool.name, "run", tool.resource("run"), context)
        decision = index.decide(call)
        effect, determining = cedar_over_everything(index, call)
        case = f"{who.agent_id} {sorted(who.groups)} {tool.name} {arguments} {hour}h"
        assert decision.effect is effect, case
        if effect is not Effect.PERMIT:
            assert set(decision.policies) == determining, case
        seen.add(effect)
    assert seen == {Effect.PERMIT, Effect.FORBID, Effect.HOLD}  # the cases reach every outcome


def empty_call(who: Who, tool: ToolFacts, resource: dict[str, Any] | None = None) -> CedarCall:
    """A call of ``tool`` with empty arguments at the epoch, its attributes as given (default: the tool's)."""
    context = call_context(tool, "run", EMPTY, target=None, acted_by=None, estimate={}, above_default=False, now=0)
    return CedarCall.build(who, tool.name, "run", resource or tool.resource("run"), context)


def indexed(directory: Path, text: str) -> PolicyIndex:
    (directory / "tags.cedar").write_text(text)
    return compile_policies(directory, TOOLS)


def test_a_caller_is_evaluated_against_only_the_policies_its_scope_admits(index: PolicyIndex) -> None:
    stranger = empty_call(Who(agent_id="dave"), TOOLS[0])
    # dave is in no group: only the unconditional permit and the rules on every principal can apply
    assert index.decide(stranger).effect is Effect.PERMIT
    narrowed = index.evaluated(stranger)
    assert all("principal ==" not in str(source.policy) for source in narrowed)
    assert len(narrowed) < len(index.applicable("tool0.run"))


def policies(text: str) -> list[Any]:
    return list(cedarpy.policies_to_pst(text).static_policies.values())


def test_the_paths_policies_read_are_what_cedar_is_shown() -> None:
    read = policies(
        "forbid(principal, action, resource) when { context has input.path && context.input.size > 3 };\n"
        'forbid(principal, action, resource) when { context.time.hour == 2 && principal.role == "x" };\n'
        "forbid(principal, action, resource)"
        ' when { (if context.input.tags.isEmpty() then context.target else "") == "t" };'
    )
    paths = context_paths(read)
    assert paths == {"input": {"path": {}, "size": None, "tags": None}, "time": {"hour": None}, "target": None}
    shown = prune(
        {"input": {"path": "/p", "size": 4, "tags": [], "other": 1}, "time": {"hour": 2, "minute": 5}, "size": {}},
        paths,
    )
    assert shown == {"input": {"path": "/p", "size": 4, "tags": []}, "time": {"hour": 2}}
    assert reads_variable(read, "principal") == {"role"}


def test_a_policy_reading_the_whole_context_is_shown_all_of_it() -> None:
    whole = policies("forbid(principal, action, resource) when { context == {} };")
    assert context_paths(whole) is None
    everything = {"input": {"a": 1}, "time": {"hour": 1}}
    assert prune(everything, None) is everything


def test_membership_reads_no_principal_attribute_and_does_not_hide_those_read() -> None:
    read = policies(
        "forbid(principal, action, resource)"
        ' when { principal in Group::"g" && principal.trust.lessThan(decimal("0.5")) };'
    )
    assert reads_variable(read, "principal") == {"trust"}


def test_the_bench_shape_narrows_to_the_callers_policies(tmp_path: Path) -> None:
    lines = ["permit(principal, action, resource);"]
    lines += [f'forbid(principal == Agent::"agent-{n}", action == Action::"tool0.run", resource);' for n in range(50)]
    index = indexed(tmp_path, "\n".join(lines) + "\n")
    seven = empty_call(Who(agent_id="agent-7"), TOOLS[0])
    assert index.decide(seven).effect is Effect.FORBID
    assert len(index.evaluated(seven)) == 2
    assert index.decide(empty_call(Who(agent_id="agent-77"), TOOLS[0])).effect is Effect.PERMIT


TAG_RULE = """
permit(principal, action, resource);
@reason("pii stays with the privacy group")
forbid(principal, action, resource) when { resource.policy_tags.contains("pii") && !(principal in Group::"privacy") };
"""


def test_a_tag_rule_costs_a_tool_without_the_tag_nothing(tmp_path: Path) -> None:
    index = indexed(tmp_path, TAG_RULE)
    call = empty_call(Who(agent_id="analyst"), TOOLS[1])
    assert index.fixed("tool1.run") is None  # the rule names no action or tool: it is read for every call
    assert [source.id for source in index.evaluated(call)] == ["tags.cedar:2"]  # this tool fails its tag test
    assert index.decide(call).effect is Effect.PERMIT


def test_a_tool_tagged_since_the_index_was_built_is_judged_by_its_tags_now(tmp_path: Path) -> None:
    index = indexed(tmp_path, TAG_RULE)
    tool, analyst = TOOLS[1], Who(agent_id="analyst")
    assert index.decide(empty_call(analyst, tool)).effect is Effect.PERMIT
    tagged = {**tool.resource("run"), "policy_tags": ["pii", "tag1"]}  # re-pinned with a new tag
    decision = index.decide(empty_call(analyst, tool, tagged))
    assert decision.effect is Effect.FORBID and decision.reasons == ("pii stays with the privacy group",)
    member = Who(agent_id="analyst", groups=frozenset({"privacy"}))
    assert index.decide(empty_call(member, tool, tagged)).effect is Effect.PERMIT


def test_a_retagged_tool_is_shown_to_cedar_with_its_new_tags_even_after_a_cached_call(tmp_path: Path) -> None:
    # a second rule reads the input, so the untagged call is evaluated by Cedar and its entities are kept
    index = indexed(tmp_path, TAG_RULE + "forbid(principal, action, resource) when { context.input.size > 1000 };\n")
    tool, analyst = TOOLS[1], Who(agent_id="analyst")
    untagged = empty_call(analyst, tool)
    assert len(index.evaluated(untagged)) == 2 and index.decide(untagged).effect is Effect.PERMIT
    tagged = {**tool.resource("run"), "policy_tags": ["pii", "tag1"]}
    assert index.decide(empty_call(analyst, tool, tagged)).effect is Effect.FORBID
