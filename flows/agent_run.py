"""agent_run: an agent's model loop as a Prefect flow, every tool call a Colony task run.

pydantic-ai's Prefect integration (``PrefectDurability``) makes each model request a task;
the agent's tools go through ``Runtime.call`` as the agent, with Prefect's execute step
(``flows._runtime``): each tool call is the action's task, cached and retried by the
tool's determinism, and a side-effecting one passes the gate first.

A held call does not pause the run: the run ends (``Completed``, named *Held*) with the
held calls and the run's messages as its result, holding no worker while a person decides
(``colony approvals approve|reject``, HTTP, MCP; the run's log names each held call). A
later run with ``resume_from`` set to that run's id reads the kernel's decisions and carries
on: an approved call runs once and is recorded, a rejected one reaches the model as the
reviewer's answer.
"""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from prefect import flow
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext
from prefect.logging import get_run_logger
from prefect.states import State
from prefect.utilities.asyncutils import run_coro_as_sync
from pydantic_ai import AgentRunResult, DeferredToolRequests
from pydantic_ai.durable_exec.prefect import PrefectDurability
from pydantic_ai.exceptions import AgentRunError
from pydantic_ai.models import Model

from blocks import load_settings
from colony.agents import (
    Agent,
    AgentOutput,
    HeldRun,
    assemble,
    decisions,
    load_agent_spec,
    model_agent,
    model_failure,
    resolve_model,
)
from colony.errors import AgentSpecError
from flows._heartbeat import beating
from flows._report import as_json, finish, publish
from flows._runtime import flow_runtime
from flows.holds import waiting_line
from flows.results import AgentRunSummary

__all__ = ["RESULT_ARTIFACT", "AgentRunSummary", "agent_run", "run_agent"]

RESULT_ARTIFACT = "agent-run-result"


@flow(name="agent-run", log_prints=False)
@beating
def agent_run(spec: str, prompt: str = "", resume_from: UUID | None = None) -> State[AgentRunSummary]:
    """Run an agent's model loop over its tools; a held call ends the run until a person decides it.

    Args:
        spec: The agent spec file (YAML or JSON), relative to the checkout or absolute.
        prompt: What to ask the agent (ignored when resuming).
        resume_from: A held agent-run's flow run id: carry it on with the kernel's decisions.
    """
    return run_agent(spec, prompt, resume_from)


def run_agent(
    spec: str, prompt: str = "", resume_from: UUID | None = None, *, model: Model | None = None
) -> State[AgentRunSummary]:
    """The flow's body, in the current flow run; ``model`` replaces the spec's (a scripted model in tests)."""
    runtime = flow_runtime(load_settings(), pause_on_hold=False)
    agent = assemble(load_agent_spec(Path(spec)), runtime)
    chosen = model if model is not None else resolve_model(agent)
    durable = model_agent(agent, model=chosen, capabilities=[PrefectDurability()])
    held = _held(resume_from, agent) if resume_from is not None else None

    async def go() -> AgentRunResult[AgentOutput]:
        try:
            if held is None:
                return await durable.run(prompt)
            results = await decisions(agent, held.deferred())
            return await durable.run(None, message_history=held.history(), deferred_tool_results=results)
        except AgentRunError as error:
            raise model_failure(agent, chosen, error) from None

    result: AgentRunResult[AgentOutput] = run_coro_as_sync(go())
    output = result.output
    calls = sum(1 for message in result.new_messages() for part in message.parts if part.part_kind == "tool-call")
    if isinstance(output, DeferredToolRequests):
        kept = HeldRun.of(agent.name, result.all_messages(), output, spec)
        _attach(agent, kept)
        summary = AgentRunSummary(
            agent=agent.name,
            spec=spec,
            held=True,
            approvals=kept.approval_ids,
            held_run=kept.model_dump(mode="json"),
            tool_calls=calls,
        )
        message = f"waits for approval of {', '.join(kept.approval_ids)}; decide, then run again with resume_from"
        publish(RESULT_ARTIFACT, f"# {agent.name}: held\n\n{message}\n", f"{agent.name}: held")
        return finish(summary, name="Held", message=message, succeeded=True)
    summary = AgentRunSummary(agent=agent.name, spec=spec, held=False, output=str(output), tool_calls=calls)
    publish(RESULT_ARTIFACT, f"# {agent.name}\n\n{as_json(summary.output)}\n", f"{agent.name}: answered")
    return finish(summary, name="Completed", message=f"{agent.name} answered", succeeded=True)


def _held(flow_run_id: UUID, agent: Agent) -> HeldRun:
    """The held run another agent-run ended with, read back through the API (its result in Colony's storage)."""
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run_id).state
    summary = state.result(raise_on_failure=False) if state is not None else None
    if not isinstance(summary, AgentRunSummary) or summary.held_run is None:
        raise AgentSpecError(f"flow run {flow_run_id} is not a held agent-run")
    if summary.agent != agent.name:
        raise AgentSpecError(f"flow run {flow_run_id} is agent {summary.agent!r}'s, not {agent.name!r}'s")
    return HeldRun.model_validate(summary.held_run)


def _attach(agent: Agent, held: HeldRun) -> None:
    """Name this run on each approval request it waits on, and say in its log how each is decided and resumed."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    kernel = agent.runtime.kernels.get()
    logger = get_run_logger(context)
    then = f", then run agent-run again with resume_from={context.flow_run.id}"
    for approval_id in held.approval_ids:
        logger.info(waiting_line(kernel.attach_flow_run(approval_id, str(context.flow_run.id)), then))
