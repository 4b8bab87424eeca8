"""Gate, then execute, then record: a side-effecting catalog call on behalf of an agent.

The verdict travels with the answer. REFUSE and HOLD raise
ActionNotExecutedError carrying the verdict; after EXECUTE the outcome is
recorded with the verdict's authorization, whether the tool succeeded or failed.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from colony.errors import ActionNotExecutedError, ColonyError

if TYPE_CHECKING:
    from colony.surfaces.toolhost import Caller, CallResult, CatalogTool, LocalToolHost

__all__ = ["governed_call"]


async def governed_call(
    host: LocalToolHost, tool: CatalogTool, arguments: dict[str, Any], caller: Caller
) -> CallResult:
    """Propose the call to the kernel, run it on EXECUTE, and record what happened."""
    from colony.kernel import Decision, ProposeActionRequest
    from colony.surfaces.toolhost import CallResult

    kernel = host.kernels.get()
    spec = tool.capability.spec
    proposal = ProposeActionRequest(
        agent_id=caller.agent_id,
        action_type=tool.action,
        target=spec.tool_id,
        rationale=caller.rationale or f"{caller.agent_id} calls {spec.name}.{tool.action} through a Colony surface",
        rollback_plan=caller.rollback_plan or "",
        evidence=json.dumps(
            {**(caller.evidence or {}), "tool": spec.name, "version": spec.version, "arguments": arguments},
            default=str,
        ),
        side_effecting=True,
        budget_estimate={
            "llm_calls": spec.cost_model.llm_calls,
            "runtime_seconds": spec.resource_requirements.expected_wallclock_seconds or spec.cost_model.cpu_seconds,
        },
    )
    verdict = await anyio.to_thread.run_sync(kernel.propose_action, proposal)
    shown = verdict.seed_dict()
    if verdict.decision is not Decision.EXECUTE:
        raise ActionNotExecutedError(
            f"the gate answered {verdict.decision.value} for {spec.name}: {verdict.reason}", verdict=shown
        )
    started = time.monotonic()
    try:
        result = await host.execute(tool, arguments)
    except ColonyError as error:
        await _record(kernel, caller, tool, verdict.authorization, f"failed: {error}", False, started)
        raise
    outcome = await _record(kernel, caller, tool, verdict.authorization, "completed", True, started)
    return CallResult(result=result, verdict=shown, outcome=outcome)


async def _record(
    kernel: Any,
    caller: Caller,
    tool: CatalogTool,
    authorization: str | None,
    what_happened: str,
    passed: bool,
    started: float,
) -> dict[str, Any]:
    from colony.kernel import RecordOutcomeRequest

    request = RecordOutcomeRequest(
        agent_id=caller.agent_id,
        action_type=tool.action,
        target=tool.capability.spec.tool_id,
        actual_outcome=f"{tool.name}: {what_happened}",
        tests_passed=passed,
        human_feedback=0.0,
        runtime_seconds=time.monotonic() - started,
        llm_calls=tool.capability.spec.cost_model.llm_calls,
    )
    record = await anyio.to_thread.run_sync(lambda: kernel.record_outcome(request, authorization=authorization))
    dumped: dict[str, Any] = record.model_dump(mode="json")
    return dumped
