"""Property: through every in-process surface, a side-effecting tool runs only under an EXECUTE verdict.

Whatever the agent's trust, the case it makes, the pressure at the tool and the
surface it calls through, each execution of a side-effecting catalog tool is
matched by exactly one attested outcome (recorded with the authorization of an
EXECUTE verdict), and a call that was not executed left nothing behind.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from colony.agents import AgentSpec, assemble
from colony.errors import ColonyError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, KernelProvider, Runtime
from colony.surfaces import UnifiedToolClient
from colony.surfaces.mcp.server import build_mcp_server
from tests.doubles import CALLS
from tests.security.conftest import CASE

Surface = Callable[[Runtime, str, str, dict[str, Any], dict[str, Any]], Awaitable[None]]


async def through_runtime(runtime: Runtime, agent: str, tool: str, args: dict[str, Any], case: dict[str, Any]) -> None:
    await runtime.call(CallRequest(tool, args, agent_id=agent, **case), LOCAL_OPERATOR)


async def through_client(runtime: Runtime, agent: str, tool: str, args: dict[str, Any], case: dict[str, Any]) -> None:
    await UnifiedToolClient(agent_id=agent, runtime=runtime).acall_local(tool, args, **case)


async def through_agent(runtime: Runtime, agent: str, tool: str, args: dict[str, Any], case: dict[str, Any]) -> None:
    action = runtime.catalog.resolve(tool).primary_action
    approval = {f"tool:{tool}.{action}": "required"} if "x" in agent else {}
    mounted = assemble(AgentSpec(name=agent, capabilities=(tool,), tool_approval=approval), runtime)
    await mounted.call(action, args, **case)


async def through_mcp(runtime: Runtime, agent: str, tool: str, args: dict[str, Any], case: dict[str, Any]) -> None:
    async with Client(build_mcp_server(runtime, acting_for=agent)) as client:
        await client.call_tool(tool, {**args, **case})


SURFACES: dict[str, Surface] = {
    "runtime": through_runtime,
    "client": through_client,
    "agent": through_agent,
    "mcp": through_mcp,
}


@pytest.fixture(scope="module")
def world(attack_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Runtime, ColonyKernel, Path]:
    home = tmp_path_factory.mktemp("property-home")
    kernel = ColonyKernel(KernelSettings(home=home, budget_llm_calls=10**6, budget_runtime_seconds=10**6))
    path = attack_repo / ".colony" / "tool-registry.json"
    document = path.read_text()
    property_repo = home / "repo" / ".colony" / "tool-registry.json"
    property_repo.parent.mkdir(parents=True)
    property_repo.write_text(
        document.replace(
            '"tools": [',
            '"tools": [{"name": "ledger_double", "capability": "write_entry", '
            '"capability_fqn": "tests.doubles.LedgerToolDouble"}, ',
        )
    )
    return Runtime(Catalog(property_repo), kernels=KernelProvider(kernel)), kernel, home


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    surface=st.sampled_from(sorted(SURFACES)),
    tool=st.sampled_from(["append_note", "ledger_double"]),
    trust=st.sampled_from([0.1, 0.35, 0.6, 0.95]),
    case=st.fixed_dictionaries(
        {},
        optional={
            "rationale": st.sampled_from([CASE["rationale"], "short", ""]),
            "rollback_plan": st.sampled_from([CASE["rollback_plan"], ""]),
            "evidence": st.sampled_from([CASE["evidence"], {}]),
        },
    ),
    pressure=st.sampled_from([0.0, 40.0]),
    needs_approval=st.booleans(),
)
def test_no_execution_without_an_execute_verdict(
    world: tuple[Runtime, ColonyKernel, Path],
    monkeypatch: pytest.MonkeyPatch,
    surface: str,
    tool: str,
    trust: float,
    case: dict[str, Any],
    pressure: float,
    needs_approval: bool,
) -> None:
    runtime, kernel, home = world
    monkeypatch.setenv("COLONY_HOME", str(home))
    agent = f"{'x' if needs_approval else 'a'}-{uuid.uuid4().hex[:10]}"
    kernel.set_trust(agent, trust)
    if pressure:
        kernel.deposit(f"tool:{tool}", "failure", pressure)
    target = home / f"{agent}.txt"
    args = {"note": agent} if tool == "append_note" else {"path": str(target), "text": agent}

    def executions() -> int:
        if tool == "ledger_double":
            return CALLS[f"write:{target}"]
        notes = home / "notes.txt"
        return sum(line == agent for line in notes.read_text().splitlines()) if notes.exists() else 0

    async def attempt() -> None:
        with contextlib.suppress(ColonyError):  # refused, held or invalid: the property is about what ran
            await SURFACES[surface](runtime, agent, tool, args, case)

    anyio.run(attempt)
    attested = [c for c in kernel.consequence_log(agent) if c.proposal_id is not None and c.tests_passed]
    assert executions() == len(attested) <= 1
    if needs_approval and surface == "agent":
        assert executions() == 0  # a person must approve, and nobody did


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_surface_executes_a_well_made_case_once(
    world: tuple[Runtime, ColonyKernel, Path], monkeypatch: pytest.MonkeyPatch, surface: str
) -> None:
    """The property above is not vacuous: a trusted agent with a full case does run, once, attested."""
    runtime, kernel, home = world
    monkeypatch.setenv("COLONY_HOME", str(home))
    agent = f"a-{uuid.uuid4().hex[:10]}"
    kernel.set_trust(agent, 0.95)
    target = home / f"{agent}.txt"
    anyio.run(SURFACES[surface], runtime, agent, "ledger_double", {"path": str(target), "text": agent}, CASE)
    assert target.read_text() == agent and CALLS[f"write:{target}"] == 1
    [consequence] = kernel.consequence_log(agent)
    assert consequence.proposal_id is not None and consequence.tests_passed
