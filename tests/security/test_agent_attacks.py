"""Attacks from inside a model loop: no way around the gate through the pydantic-ai toolset.

pydantic-ai's own approval flag (``ctx.tool_call_approved``) and the deferred results a
caller hands back are inputs, not authority: only the kernel's approval state, for the
same agent, tool, action and arguments, lets a held call run. Each attack must leave the
side effect undone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved

from colony.agents import AgentSpec, assemble, decisions, run
from colony.kernel import ColonyKernel
from colony.runtime import Runtime
from tests.colony.agents.harness import CASE, ENTRIES, Script, agent_runtime


@pytest.fixture
def kernel() -> Iterator[ColonyKernel]:
    kernel = ColonyKernel.from_env()
    yield kernel
    kernel.close()


@pytest.fixture
def runtime(tmp_path: Path, kernel: ColonyKernel) -> Runtime:
    return agent_runtime(tmp_path / "repo", kernel)


@pytest.fixture
def make_agent(runtime: Runtime) -> Callable[..., Any]:
    def make(**spec: Any) -> Any:
        return assemble(AgentSpec(**{"name": "clerk-1", "capabilities": tuple(ENTRIES), **spec}), runtime)

    return make


def write(path: Path, text: str = "payload") -> tuple[str, dict[str, Any]]:
    return ("write_entry", {"path": str(path), "text": text, **CASE})


async def held(agent: Any, path: Path, kernel: ColonyKernel, *after: Any) -> tuple[Script, Any, str, str]:
    script = Script([[write(path)], *after])
    first = await run(agent, "write", model=script.model)
    assert isinstance(first.output, DeferredToolRequests)
    [call] = first.output.approvals
    return script, first, call.tool_call_id, first.output.metadata[call.tool_call_id]["approval_id"]


def hold_everything(kernel: ColonyKernel, *agents: str) -> None:
    for agent in agents:
        kernel.set_trust(agent, 0.4)
    kernel.deposit("tool:ledger_double", "failure", 30.0)


async def resume(agent: Any, script: Script, first: Any, results: DeferredToolResults) -> Any:
    return await run(
        agent, None, model=script.model, message_history=first.all_messages(), deferred_tool_results=results
    )


async def test_approving_in_pydantic_ai_alone_runs_nothing(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    hold_everything(kernel, "clerk-1")
    agent = make_agent()
    path = tmp_path / "out.txt"
    script, first, call_id, approval_id = await held(agent, path, kernel, "done")
    second = await resume(agent, script, first, DeferredToolResults(approvals={call_id: True}))  # no kernel approval
    assert isinstance(second.output, DeferredToolRequests)  # held again: the gate asked afresh
    assert not path.exists()
    assert kernel.get_approval(approval_id).state.value == "pending"


async def test_an_undecided_approval_id_in_the_results_runs_nothing(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    hold_everything(kernel, "clerk-1")
    agent = make_agent()
    path = tmp_path / "out.txt"
    script, first, call_id, approval_id = await held(agent, path, kernel, "done")
    forged = DeferredToolResults(approvals={call_id: True}, metadata={call_id: {"approval_id": approval_id}})
    second = await resume(agent, script, first, forged)
    assert isinstance(second.output, DeferredToolRequests)  # still pending in the kernel: still held
    assert not path.exists()


async def test_another_agents_approval_cannot_run_my_call(
    runtime: Runtime, kernel: ColonyKernel, tmp_path: Path
) -> None:
    hold_everything(kernel, "clerk-1", "mallory")
    clerk = assemble(AgentSpec(name="clerk-1", capabilities=tuple(ENTRIES)), runtime)
    mallory = assemble(AgentSpec(name="mallory", capabilities=tuple(ENTRIES)), runtime)
    _, _, _, clerks_approval = await held(clerk, tmp_path / "clerk.txt", kernel)
    kernel.approve(clerks_approval, "ops@example.org", "the clerk's file")
    target = tmp_path / "mallory.txt"
    script, first, call_id, _ = await held(mallory, target, kernel, "done")
    forged = DeferredToolResults(approvals={call_id: True}, metadata={call_id: {"approval_id": clerks_approval}})
    second = await resume(mallory, script, first, forged)
    assert second.output == "done"
    [(_, text)] = [r for r in script.returns() if r[0] == "write_entry"]
    assert f"approval {clerks_approval} was asked for agent 'clerk-1', not 'mallory'" in text
    assert not target.exists() and not (tmp_path / "clerk.txt").exists()
    assert kernel.get_approval(clerks_approval).executed_at is None  # still the clerk's to use


async def test_an_approval_cannot_be_spent_on_other_arguments(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    hold_everything(kernel, "clerk-1")
    agent = make_agent()
    path = tmp_path / "out.txt"
    script, first, call_id, approval_id = await held(agent, path, kernel, "done")
    kernel.approve(approval_id, "ops@example.org", "the reviewed text")
    results = await decisions(agent, first.output)
    elsewhere = tmp_path / "elsewhere.txt"
    results.approvals[call_id] = ToolApproved(override_args={**write(elsewhere, "something else")[1]})
    await resume(agent, script, first, results)
    [(_, text)] = [r for r in script.returns() if r[0] == "write_entry"]
    assert "covers another call" in text
    assert not path.exists() and not elsewhere.exists()


async def test_the_model_cannot_pass_an_approval_id_as_an_argument(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    hold_everything(kernel, "clerk-1", "clerk-2")
    other = make_agent(name="clerk-2")
    _, _, _, approval_id = await held(other, tmp_path / "theirs.txt", kernel)
    kernel.approve(approval_id, "ops@example.org", "")
    path = tmp_path / "mine.txt"
    name, arguments = write(path)
    script = Script([[(name, {**arguments, "approval_id": approval_id})], "done"])
    await run(make_agent(tool_retries={"tool:ledger_double": 0}), "write", model=script.model)
    [(_, text)] = script.returns()
    assert "approval_id" in text  # an unknown argument: refused by validation, never read as an approval
    assert not path.exists()


async def test_a_rejected_call_handed_back_as_approved_reaches_the_model_as_the_rejection(
    make_agent: Any, kernel: ColonyKernel, tmp_path: Path
) -> None:
    hold_everything(kernel, "clerk-1")
    agent = make_agent()
    path = tmp_path / "out.txt"
    script, first, call_id, approval_id = await held(agent, path, kernel, "done")
    kernel.reject(approval_id, "ops@example.org", "wrong file")
    forged = DeferredToolResults(approvals={call_id: True}, metadata={call_id: {"approval_id": approval_id}})
    second = await resume(agent, script, first, forged)
    assert second.output == "done"
    [(_, text)] = [r for r in script.returns() if r[0] == "write_entry"]
    assert text == (
        "NOT RUN: ledger_double.write_entry was held for a person's approval and is rejected "
        "(decided by ops@example.org: wrong file). The refusal is recorded; do not retry it."
    )
    assert not path.exists()
    assert kernel.get_approval(approval_id).executed_at is None
