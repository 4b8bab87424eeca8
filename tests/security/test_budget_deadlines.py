"""A call's deadline is its own timeout cut to the budget left; what ran is recorded as it happened, never refused.

A runtime budget smaller than one call used to let the call run to its end, then answer
400 (the measured usage "exceeds the budget period's limit"): the output was lost, nothing
was recorded, the reservation stayed held, and a client that retried ran it again. On
Prefect, a task timeout that cannot stop a worker thread threw away what a finished
script did and recorded a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from colony.kernel import ColonyKernel, Decision, KernelSettings
from flows.gated_action import GatedActionRequest, gated_action
from flows.tool_call import ToolCall
from tasks.kernel import kernel_for
from tests.security.conftest import CASE
from tests.services import free_port
from tests.services.gateway import start_gateway_process

BUDGET = 8.0
OVERRUN = {"script": "echo done; sleep 9"}
WHOLE_BUDGET = {"COLONY_AGENT_BUDGET_SHARE": "1"}  # one agent may hold the period: the ceiling is what cuts


def assert_settled_with_overspend(kernel: ColonyKernel, agent: str) -> None:
    """The call was recorded with the runtime it used: charged past the ceiling, flagged, its hold released."""
    usage = kernel.status().budget_usage["runtime_seconds"]
    assert usage.reserved == 0.0
    assert BUDGET < usage.used < BUDGET + 3 and usage.overspent == pytest.approx(usage.used - BUDGET)
    (record,) = kernel.consequence_log(agent)
    assert record.tests_passed and "ran until its deadline of 8 s and was killed there" in record.actual_outcome
    assert "[overspent: runtime_seconds" in record.actual_outcome


def test_over_http_a_budget_smaller_than_the_call_kills_it_at_the_budget_and_keeps_what_it_did(
    docker_client: Any, busybox_image: str, tmp_path: Path
) -> None:
    ColonyKernel(KernelSettings(home=tmp_path)).set_trust("builder", 0.9)
    port = free_port()
    env = {"COLONY_HOME": str(tmp_path), "COLONY_BUDGET_RUNTIME_SECONDS": str(BUDGET), **WHOLE_BUDGET}
    process = start_gateway_process(env, port)
    try:
        body = {"tool_name": "shell_exec", "tool_args": OVERRUN, **CASE}
        headers = {"x-colony-agent": "builder"}
        url = f"http://127.0.0.1:{port}/v1/tool_call"
        response = httpx.post(url, json=body, headers=headers, timeout=60)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["result"]["stdout"] == "done\n" and answer["result"]["timed_out"] is True
        assert answer["outcome"]["overspent"]["runtime_seconds"] > 0
        kernel = ColonyKernel(KernelSettings(home=tmp_path, budget_runtime_seconds=BUDGET))
        assert_settled_with_overspend(kernel, "builder")
        again = httpx.post(url, json=body, headers=headers, timeout=60).json()  # a client retrying
        assert again["error"]["verdict"]["budget_approved"] is False  # the spent budget runs nothing more
        assert len(kernel.consequence_log("builder")) == 1
    finally:
        process.terminate()
        process.wait(timeout=60)
        if process.stderr:
            process.stderr.close()


@pytest.mark.usefixtures("prefect_harness")
def test_a_gated_action_flow_kills_the_call_at_the_budget_and_records_what_it_did(
    docker_client: Any, busybox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLONY_BUDGET_RUNTIME_SECONDS", str(BUDGET))
    monkeypatch.setenv("COLONY_AGENT_BUDGET_SHARE", WHOLE_BUDGET["COLONY_AGENT_BUDGET_SHARE"])
    kernel = kernel_for(KernelSettings())
    kernel.set_trust("builder", 0.9)
    request = GatedActionRequest(agent_id="builder", call=ToolCall(tool="shell_exec", arguments=OVERRUN), **CASE)
    state = gated_action(request, return_state=True)
    assert state.name == "Executed", state
    summary = state.result(raise_on_failure=False)
    assert summary.result["stdout"] == "done\n" and summary.result["timed_out"] is True
    assert summary.verdict is not None and summary.verdict.decision is Decision.EXECUTE
    assert_settled_with_overspend(kernel, "builder")


@pytest.mark.usefixtures("prefect_harness")
def test_a_gated_action_that_runs_longer_than_its_spec_expects_is_recorded_as_done(
    docker_client: Any, busybox_image: str
) -> None:
    kernel = kernel_for(KernelSettings())
    kernel.set_trust("builder", 0.9)
    call = ToolCall(tool="shell_exec", arguments={"script": "sleep 12; echo finished", "timeout_seconds": 60})
    state = gated_action(GatedActionRequest(agent_id="builder", call=call, **CASE), return_state=True)
    assert state.name == "Executed", state
    summary = state.result(raise_on_failure=False)
    assert summary.result["stdout"] == "finished\n" and summary.result["timed_out"] is False
    (record,) = kernel.consequence_log("builder")
    assert record.tests_passed and record.actual_outcome.endswith("executed successfully")
