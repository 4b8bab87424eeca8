"""One bad case, one refusal: every surface refuses the same malformed case to the gate, naming the same field.

The case a governed call carries (rationale, rollback plan, evidence, estimate) is sent
wrong in each way a caller can get it wrong (a wrong type, oversized text, evidence that
is not a JSON object or too large, a negative or NaN estimate) through the gateway's HTTP
body, MCP (the official client), an agent's toolset (the model loop), the client, and the
flows' parameters; each refuses it before the gate, and nothing runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client
from prefect.exceptions import ParameterTypeError

from colony.agents import AgentSpec, assemble, run
from colony.errors import ToolInputError
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import LOCAL_OPERATOR, CallRequest, Catalog, KernelProvider, Runtime
from colony.surfaces import UnifiedToolClient
from colony.surfaces.gateway import GatewaySettings, create_app
from colony.surfaces.mcp.server import build_mcp_server
from flows.gated_action import gated_action
from flows.tool_call import tool_call
from tests.colony.agents.harness import Script

AGENT = "case-clerk"
CASE = {
    "rationale": "Write the nightly figures to the ledger file the reviewer asked for",
    "rollback_plan": "erase_entry removes the written file again",
}
BAD_CASES = {
    "a number for the rationale": ({"rationale": 12345}, "rationale"),
    "a rationale past the text cap": ({"rationale": "x" * 10_001}, "rationale"),
    "a list for the rollback plan": ({"rollback_plan": ["undo it"]}, "rollback_plan"),
    "text for the evidence": ({"evidence": "the tests pass"}, "evidence"),
    "a list for the evidence": ({"evidence": ["tests/test_ledger.py"]}, "evidence"),
    "evidence past its cap": ({"evidence": {"log": "x" * 100_001}}, "evidence"),
}
BAD_ESTIMATES = {
    "a negative estimate": ({"budget_estimate": {"llm_calls": -1}}, "budget_estimate.llm_calls"),
    "a NaN estimate": ({"budget_estimate": {"runtime_seconds": math.nan}}, "budget_estimate.runtime_seconds"),
    "an unknown dimension": ({"budget_estimate": {"gpus": 1}}, "budget_estimate.gpus.[key]"),
}

Refusal = tuple[list[str], list[str]]  # the fields at fault, and what was said of each
Surface = Callable[["World", dict[str, Any]], Awaitable[Refusal]]


class World:
    """A runtime whose catalog is the side-effecting ledger double, and where its writes would land."""

    def __init__(self, root: Path) -> None:
        registry = root / "repo" / ".colony" / "tool-registry.json"
        registry.parent.mkdir(parents=True)
        entry = {
            "name": "ledger_double",
            "capability": "write_entry",
            "capability_fqn": "tests.doubles.LedgerToolDouble",
        }
        registry.write_text(json.dumps({"version": 1, "tools": [entry]}))
        self.kernel = ColonyKernel(KernelSettings(home=root / "home"))
        self.kernel.set_trust(AGENT, 0.9)
        self.runtime = Runtime(Catalog(registry), kernels=KernelProvider(self.kernel))
        self.entry = root / "entry.txt"

    def arguments(self) -> dict[str, Any]:
        return {"path": str(self.entry), "text": "figures"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    world = World(tmp_path_factory.mktemp("case"))
    yield world
    world.kernel.close()


async def through_http(world: World, case: dict[str, Any]) -> Refusal:
    body = {"tool_name": "ledger_double", "tool_args": world.arguments(), **case}
    with TestClient(
        create_app(GatewaySettings(port=8787), runtime=world.runtime), base_url="http://127.0.0.1:8787"
    ) as http:
        response = http.post(
            "/v1/tool_call",
            content=json.dumps(body),
            headers={"content-type": "application/json", "x-colony-agent": AGENT},
        )
    assert response.status_code == 422, response.text
    errors = response.json()["error"]["errors"]
    return [error["field"] for error in errors], [error["message"] for error in errors]


async def through_mcp(world: World, case: dict[str, Any]) -> Refusal:
    async with Client(build_mcp_server(world.runtime, acting_for=AGENT)) as client:
        result = await client.call_tool("ledger_double", {**world.arguments(), **case})
    assert result.is_error
    errors = json.loads(result.content[0].text)["errors"]  # type: ignore[union-attr]
    return [error["field"] for error in errors], [error["message"] for error in errors]


async def through_client(world: World, case: dict[str, Any]) -> Refusal:
    client = UnifiedToolClient(agent_id=AGENT, runtime=world.runtime)
    with pytest.raises(ToolInputError) as refused:
        await client.acall_local("ledger_double", world.arguments(), **case)
    return [error.field for error in refused.value.errors], [error.message for error in refused.value.errors]


async def through_toolset(world: World, case: dict[str, Any]) -> Refusal:
    agent = assemble(AgentSpec(name=AGENT, capabilities=("ledger_double",)), world.runtime)
    script = Script([[("write_entry", {**world.arguments(), **case})], "gave up"])
    await run(agent, "write the figures", model=script.model)
    [(_, steer)] = script.returns()
    faults = [line.removeprefix("- ").split(": ", 1) for line in str(steer).splitlines() if line.startswith("- ")]
    return [field for field, _ in faults], [message.split(" (expected ")[0] for _, message in faults]


async def through_gated_action(world: World, case: dict[str, Any]) -> Refusal:
    call = {"tool": "ledger_double", "arguments": world.arguments()}
    with pytest.raises(ParameterTypeError) as refused:
        gated_action.validate_parameters({"request": {"agent_id": AGENT, "call": call, **case}})
    return parameter_faults(str(refused.value), "request.")


async def through_tool_call(world: World, case: dict[str, Any]) -> Refusal:
    call = {"tool": "ledger_double", "arguments": world.arguments()}
    with pytest.raises(ParameterTypeError) as refused:
        tool_call.validate_parameters({"call": call, "agent_id": AGENT, **case})
    return parameter_faults(str(refused.value), "")


def parameter_faults(text: str, prefix: str) -> Refusal:
    """The fields and messages of Prefect's refusal of a flow's parameters (`` - field: message`` lines)."""
    lines = [line.removeprefix(" - ").split(": ", 1) for line in text.splitlines() if line.startswith(" - ")]
    return [field.removeprefix(prefix) for field, _ in lines], [message for _, message in lines]


CASE_SURFACES: dict[str, Surface] = {
    "http": through_http,
    "mcp": through_mcp,
    "toolset": through_toolset,
    "client": through_client,
    "gated-action flow": through_gated_action,
    "tool-call flow": through_tool_call,
}


@pytest.mark.parametrize("bad", list(BAD_CASES), ids=list(BAD_CASES))
async def test_every_surface_refuses_a_bad_case_naming_the_same_field(world: World, bad: str) -> None:
    change, field = BAD_CASES[bad]
    refusals = {name: await surface(world, {**CASE, **change}) for name, surface in CASE_SURFACES.items()}
    for name, (fields, _) in refusals.items():
        assert fields == [field], (name, refusals)
    messages = {name: messages for name, (_, messages) in refusals.items()}
    assert len({json.dumps(said) for said in messages.values()}) == 1, messages  # and says the same of it
    assert not world.entry.exists() and world.kernel.proposal_counts(AGENT).total == 0  # refused before the gate


@pytest.mark.parametrize("bad", list(BAD_ESTIMATES), ids=list(BAD_ESTIMATES))
async def test_a_bad_estimate_is_refused_naming_its_dimension(world: World, bad: str) -> None:
    change, field = BAD_ESTIMATES[bad]
    with pytest.raises(ToolInputError) as direct:
        request = CallRequest("ledger_double", world.arguments(), agent_id=AGENT, **CASE, **change)
        await world.runtime.call(request, LOCAL_OPERATOR)
    assert [error.field for error in direct.value.errors] == [field]
    fields, _ = await through_gated_action(world, {**CASE, **change})
    assert fields == [field]
    for surface in (through_http, through_mcp, through_toolset):  # they take no estimate: refused, never ignored
        fields, _ = await surface(world, {**CASE, **change})
        assert fields == ["budget_estimate"]
    assert not world.entry.exists() and world.kernel.proposal_counts(AGENT).total == 0
