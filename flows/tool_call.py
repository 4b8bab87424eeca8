"""tool_call: run one catalog tool by name with JSON arguments, through the one governed pipeline.

A pure tool is validated and run as its task (cached per determinism); a
side-effecting one passes the gate as the agent the run names, exactly as
``gated-action`` and every other surface do. The result is the run's result (JSON in
Colony's result storage, so the UI and the deployment's caller read it back) and a
``tool-call-result`` artifact.
"""

from __future__ import annotations

from prefect import flow
from prefect.states import State
from prefect.utilities.asyncutils import run_coro_as_sync

from blocks import load_settings
from colony.runtime import CallRequest, wire
from colony.runtime.case import Evidence, Rationale, RollbackPlan
from flows._catalog import ToolCall
from flows._heartbeat import beating
from flows._report import as_json, finish, publish
from flows._runtime import PREFECT_OPERATOR, flow_runtime
from flows._tracing import traced
from flows.results import ToolCallResult

__all__ = ["RESULT_ARTIFACT", "ToolCall", "ToolCallResult", "tool_call"]

RESULT_ARTIFACT = "tool-call-result"


@flow(name="tool-call", log_prints=False)
@beating
@traced
def tool_call(
    call: ToolCall,
    agent_id: str | None = None,
    rationale: Rationale = None,
    rollback_plan: RollbackPlan = None,
    evidence: Evidence = None,
) -> State[ToolCallResult]:
    """Run one tool action, its result the run's result; bad arguments fail the run with an error naming each field.

    Args:
        call: The tool, action and arguments.
        agent_id: For a governed tool: the agent the call acts for (its trust is what the gate weighs).
        rationale: For a governed tool: why the call is necessary (20+ characters).
        rollback_plan: For a governed tool: how it would be undone.
        evidence: For a governed tool: supporting evidence (tests, PRs, logs).
    """
    runtime = flow_runtime(load_settings())
    request = CallRequest(
        tool=call.tool,
        arguments=call.arguments,
        action=call.action,
        agent_id=agent_id,
        rationale=rationale,
        rollback_plan=rollback_plan,
        evidence=evidence,
    )
    outcome = run_coro_as_sync(runtime.call(request, PREFECT_OPERATOR))
    assert outcome is not None
    outcome.raise_for_status()
    result = ToolCallResult(
        tool=outcome.tool,
        version=outcome.version,
        action=outcome.action,
        result=outcome.result,
        cached=outcome.cached,
        verdict=wire(outcome.verdict),
    )
    what = f"{result.tool}.{result.action} {result.version}" + (" (cached)" if result.cached else "")
    publish(RESULT_ARTIFACT, f"# {what}\n\n{as_json(result.model_dump(mode='json'))}\n", what)
    return finish(result, name="Completed", message=what, succeeded=True)
