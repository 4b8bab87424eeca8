"""The action-task factory against Prefect's test harness: caching, retries, tags, secrets."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from prefect import Task, flow
from prefect.blocks.system import Secret
from prefect.client.orchestration import get_client
from prefect.states import State

from colony.errors import (
    MissingSecretError,
    ToolExecutionError,
    ToolInputError,
    UngatedActionError,
    UnknownActionError,
)
from colony.runtime import Authorization
from flows.tool_call import ToolCall, tool_call
from tasks import ExecutionPolicy, action_task
from tasks.actions import _tasks
from tests.doubles import (
    CALLS,
    EchoToolDouble,
    EchoToolDoubleV2,
    FlakyToolDouble,
    IdempotentLedgerToolDouble,
    LedgerToolDouble,
    RandomToolDouble,
)
from tools.unit_convert import UnitConvert

pytestmark = pytest.mark.usefixtures("prefect_harness")
FAST = ExecutionPolicy(retries=2, backoff_seconds=0.01, jitter_factor=0.1)


def run_states(*calls: tuple[Task[..., Any], dict[str, Any]]) -> list[State[Any]]:
    """Run each (task, arguments) in one flow and return the task runs' final states.

    A governed action gets an authorization, as the Governor would issue after EXECUTE.
    """

    @flow
    def calls_flow() -> list[State[Any]]:
        return [
            task(arguments=arguments, authorization=authorized(task), return_state=True) for task, arguments in calls
        ]

    return calls_flow()


def authorized(task: Task[..., Any]) -> Authorization:
    tool, _, action = task.name.partition(".")
    return Authorization._issue(proposal_id=uuid.uuid4().hex, agent_id="engineer-1", tool=tool, action=action)


def run_count(state: State[Any]) -> int:
    with get_client(sync_client=True) as client:
        task_run_id = state.state_details.task_run_id
        assert task_run_id is not None
        return client.read_task_run(task_run_id).run_count


def test_same_inputs_hit_the_cache() -> None:
    text = uuid.uuid4().hex
    first, second = run_states(
        (action_task(EchoToolDouble), {"text": text}), (action_task(EchoToolDouble), {"text": text})
    )
    assert (first.name, second.name) == ("Completed", "Cached")
    assert second.result() == {"text": text}
    assert CALLS[f"echo_double:1.0.0:{text}"] == 1


def test_different_inputs_miss() -> None:
    first, second = run_states(
        (action_task(EchoToolDouble), {"text": "a"}), (action_task(EchoToolDouble), {"text": "b"})
    )
    assert (first.name, second.name) == ("Completed", "Completed")


def test_a_new_version_misses() -> None:
    text = uuid.uuid4().hex
    first, second = run_states(
        (action_task(EchoToolDouble), {"text": text}), (action_task(EchoToolDoubleV2), {"text": text})
    )
    assert (first.name, second.name) == ("Completed", "Completed")
    assert CALLS[f"echo_double:2.0.0:{text}"] == 1


def test_non_deterministic_and_side_effecting_actions_are_never_cached(tmp_path: Any) -> None:
    text = uuid.uuid4().hex
    path = str(tmp_path / "entry.txt")
    states = run_states(
        (action_task(RandomToolDouble), {"text": text}),
        (action_task(RandomToolDouble), {"text": text}),
        (action_task(LedgerToolDouble), {"path": path, "text": "x"}),
        (action_task(LedgerToolDouble), {"path": path, "text": "x"}),
    )
    assert [state.name for state in states] == ["Completed"] * 4
    assert CALLS[f"random_double:1.0.0:{text}"] == 2
    assert CALLS[f"write:{path}"] == 2


def test_a_cache_hit_survives_a_restart() -> None:
    arguments = {"value": 3.5, "from_unit": "km", "to_unit": "m"}
    [first] = run_states((action_task(UnitConvert), arguments))
    _tasks.clear()  # a new process builds its tasks afresh; results stay on disk
    [second] = run_states((action_task(UnitConvert), arguments))
    assert (first.name, second.name) == ("Completed", "Cached")
    assert second.result() == {"value": 3500.0, "from_unit": "km", "to_unit": "m"}


@pytest.mark.parametrize("error", ["connection", "busy", "retryable_colony"])
def test_a_transient_failure_is_retried_then_succeeds(error: str) -> None:
    key = uuid.uuid4().hex
    [state] = run_states((action_task(FlakyToolDouble, policy=FAST), {"key": key, "error": error}))
    assert state.is_completed()
    assert state.result() == {"attempts": 2}
    assert run_count(state) == 2


def test_a_permanent_failure_is_not_retried() -> None:
    key = uuid.uuid4().hex
    [state] = run_states((action_task(FlakyToolDouble, policy=FAST), {"key": key, "error": "permanent"}))
    assert state.is_failed()
    with pytest.raises(ToolExecutionError, match="corrupt"):
        state.result()
    assert CALLS[f"flaky:{key}"] == 1


def test_a_validation_error_runs_exactly_once() -> None:
    [state] = run_states((action_task(UnitConvert, policy=FAST), {"value": "ten", "from_unit": "km", "to_unit": "m"}))
    assert state.is_failed()
    with pytest.raises(ToolInputError) as raised:
        state.result()
    assert [error.field for error in raised.value.errors] == ["value"]
    assert run_count(state) == 1


def test_a_side_effect_is_retried_only_when_declared_idempotent(tmp_path: Any) -> None:
    plain, idempotent = str(tmp_path / "plain.txt"), str(tmp_path / "idempotent.txt")
    states = run_states(
        (action_task(LedgerToolDouble, policy=FAST), {"path": plain, "text": "x", "fail": True}),
        (action_task(IdempotentLedgerToolDouble, policy=FAST), {"path": idempotent, "text": "x", "fail": True}),
    )
    assert states[0].is_failed() and run_count(states[0]) == 1
    assert states[1].is_completed() and run_count(states[1]) == 2


def test_the_task_is_configured_from_the_spec() -> None:
    task = action_task(FlakyToolDouble, policy=FAST)
    assert task.name == "flaky_double.fetch"
    assert {"tool", "general", "local", "flaky_double"} <= task.tags
    assert task.timeout_seconds is None  # a Prefect timeout cannot stop a thread: the call's deadline does
    assert task.retries == 2 and task.retry_delay_seconds == [0.01, 0.02]
    assert action_task(LedgerToolDouble).retries == 0
    assert action_task(UnitConvert).timeout_seconds is None


def test_an_unknown_action_is_named() -> None:
    with pytest.raises(UnknownActionError, match=r"no action 'nope'.*convert_units"):
        action_task(UnitConvert, "nope")


def test_a_governed_action_task_refuses_to_run_without_an_authorization(tmp_path: Any) -> None:
    path = tmp_path / "entry.txt"

    @flow
    def ungated() -> State[Any]:
        return action_task(LedgerToolDouble)(arguments={"path": str(path), "text": "x"}, return_state=True)

    with pytest.raises(UngatedActionError, match="runs only with an authorization the gate issued"):
        ungated()
    assert not path.exists()


def test_a_missing_secret_fails_before_the_action_runs(
    monkeypatch: pytest.MonkeyPatch, catalog_with_doubles: Any
) -> None:
    monkeypatch.delenv("COLONY_SECRET_DOUBLE_TOKEN", raising=False)
    before = CALLS["secret"]
    with pytest.raises(MissingSecretError, match=r"'double_token' .*COLONY_SECRET_DOUBLE_TOKEN.*'double-token'"):
        tool_call(ToolCall(tool="secret_double"))
    assert CALLS["secret"] == before


def test_a_secret_resolves_from_a_prefect_secret_block(
    monkeypatch: pytest.MonkeyPatch, catalog_with_doubles: Any
) -> None:
    monkeypatch.delenv("COLONY_SECRET_DOUBLE_TOKEN", raising=False)
    Secret(value="s3cret").save("double-token", overwrite=True)
    try:
        assert tool_call(ToolCall(tool="secret_double")).result["calls"] >= 1
    finally:
        Secret.delete("double-token")
