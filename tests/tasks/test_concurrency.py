"""Tool task runs carry their tags only when a concurrency limit uses one (Prefect's test harness)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from flows.tool_call import ToolCall, tool_call
from tasks import action_task
from tasks.concurrency import LIMITED, LimitedTags, for_this_run
from tools.unit_convert import UnitConvert

pytestmark = pytest.mark.usefixtures("prefect_harness")
ARGUMENTS = {"value": 1.5, "from_unit": "km", "to_unit": "m"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def limit_tags(*tags: str) -> None:
    """Make ``tags`` exactly the tags that carry a concurrency limit."""
    with get_client(sync_client=True) as client:
        for limit in client.read_concurrency_limits(limit=200, offset=0):
            client.delete_concurrency_limit_by_tag(limit.tag)
        for tag in tags:
            client.create_concurrency_limit(tag=tag, concurrency_limit=3)


@pytest.fixture
def unit_convert_limit() -> Iterator[None]:
    limit_tags("unit_convert")
    yield
    limit_tags()


def task_run_tags(value: float) -> set[str]:
    """Run unit_convert through the tool-call flow; the tags its task run carried."""
    state = tool_call(ToolCall(tool="unit_convert", arguments={**ARGUMENTS, "value": value}), return_state=True)
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
        )
    (run,) = [run for run in runs if run.name.startswith("unit_convert.convert_units")]
    return set(run.tags)


def test_a_run_without_a_limit_on_its_tags_is_untagged() -> None:
    limited = LimitedTags(clock=Clock())
    task = action_task(UnitConvert)
    twin = for_this_run(task, limited)
    assert twin.tags == set() and twin.name == task.name and twin.cache_policy == task.cache_policy
    assert for_this_run(task, limited) is twin  # built once


def test_a_limit_on_one_tag_brings_the_tags_back_within_the_refresh(unit_convert_limit: None) -> None:
    clock = Clock()
    limited = LimitedTags(refresh_seconds=10, clock=clock)
    task = action_task(UnitConvert)
    assert for_this_run(task, limited) is task
    assert "unit_convert" in limited.current()


def test_the_limit_is_read_again_only_after_the_refresh(unit_convert_limit: None) -> None:
    clock = Clock()
    limited = LimitedTags(refresh_seconds=10, clock=clock)
    assert limited.current() == {"unit_convert"}
    limit_tags("hpc")
    clock.now = 9.9
    assert limited.current() == {"unit_convert"}
    clock.now = 10.0
    assert limited.current() == {"hpc"}


def test_a_flow_runs_the_task_tagged_only_under_a_limit(
    unit_convert_limit: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LIMITED, "_read_at", None)
    assert {"tool", "local", "unit_convert"} <= task_run_tags(1001.0)
    limit_tags("unrelated")
    monkeypatch.setattr(LIMITED, "_read_at", None)
    assert task_run_tags(1002.0) == set()
    monkeypatch.setenv("COLONY_TASK_TAGS", "always")
    assert "unit_convert" in task_run_tags(1003.0)


def test_an_unknown_tag_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_TASK_TAGS", "sometimes")
    with pytest.raises(ValueError, match="COLONY_TASK_TAGS must be 'limited' or 'always', not 'sometimes'"):
        for_this_run(action_task(UnitConvert))
