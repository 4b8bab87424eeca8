"""Agents: what a Colony tool costs per call inside a pydantic-ai model loop.

Target (issue 13): at most 1.2x pydantic-ai calling the same plain function as a tool,
for a pure tool. In-process, no Prefect, side by side in one run: a FunctionModel asks
for one ``convert_units`` call per step, ``STEPS`` steps per run, first through an
assembled agent's ColonyToolset (``Runtime.call`` as the agent: resolve, permit,
validate, execute), then through a plain pydantic-ai tool wrapping the very function
the capability's action runs. The figure is the whole run's time per tool call, model
loop included, best of ``REPEATS``; the difference between the two is Colony's share.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai import Agent as ModelAgent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from colony.agents import AgentSpec, assemble, model_agent
from colony.kernel import ColonyKernel, KernelSettings
from colony.runtime import Catalog, KernelProvider, Runtime
from tools.unit_convert import UnitConvert

STEPS = 40
REPEATS = 15
ARGUMENTS = json.dumps({"value": 10, "from_unit": "miles", "to_unit": "km"})
TARGET = 1.2


def scripted(tool_name: str) -> FunctionModel:
    """A model that calls ``tool_name`` once per step for STEPS steps, then answers."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for message in messages if isinstance(message, ModelResponse))
        if step >= STEPS:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(tool_name, ARGUMENTS, tool_call_id=f"c{step}")])

    return FunctionModel(respond)


def plain_agent() -> ModelAgent[None, str]:
    """pydantic-ai over the function the capability's action runs, as a plain tool."""
    capability = UnitConvert()
    action = UnitConvert.actions()["convert_units"].func

    agent: ModelAgent[None, str] = ModelAgent(scripted("convert_units"), output_type=str)

    @agent.tool_plain
    def convert_units(value: float, from_unit: str, to_unit: str) -> Any:
        """Convert a value between units."""
        return action(capability, value=value, from_unit=from_unit, to_unit=to_unit)

    return agent


async def one_run(agent: ModelAgent[None, Any]) -> float:
    """Seconds per tool call of one whole run."""
    start = time.perf_counter()
    result = await agent.run("convert")
    assert result.output == "done"
    return (time.perf_counter() - start) / STEPS


async def per_call(colony: ModelAgent[None, Any], plain: ModelAgent[None, Any]) -> tuple[float, float]:
    """Best-of-REPEATS seconds per tool call for each, the two runs alternating so drift hits both alike."""
    best = [float("inf"), float("inf")]
    for _ in range(REPEATS):
        for index, agent in enumerate((colony, plain)):
            best[index] = min(best[index], await one_run(agent))
    return best[0], best[1]


async def measure(root: Path) -> tuple[float, float]:
    path = root / ".colony" / "tool-registry.json"
    path.parent.mkdir(parents=True)
    entry = {"name": "unit_convert", "capability": "convert_units", "capability_fqn": "tools.unit_convert.UnitConvert"}
    path.write_text(json.dumps({"version": 1, "tools": [entry]}))
    kernel = ColonyKernel(KernelSettings(home=root))
    runtime = Runtime(Catalog(path), kernels=KernelProvider(kernel))
    colony = model_agent(
        assemble(AgentSpec(name="bench-agent", capabilities=("unit_convert",)), runtime),
        model=scripted("convert_units"),
    )
    plain = plain_agent()
    await one_run(colony)  # warm both: imports, the pool's instance, validators
    await one_run(plain)
    colony_seconds, plain_seconds = await per_call(colony, plain)
    await runtime.aclose()
    kernel.close()
    return colony_seconds, plain_seconds


def main() -> None:
    """Print Colony's tool vs a plain pydantic-ai tool, per call in a model loop, and the ratio."""
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("COLONY_HOME", home)
        colony_seconds, plain_seconds = asyncio.run(measure(Path(home)))
    ratio = colony_seconds / plain_seconds
    print(f"per tool call in a run of {STEPS} steps (FunctionModel, in-process, best of {REPEATS}):")
    print(f"  Colony capability tool (Runtime.call as the agent): {colony_seconds * 1e6:8.1f} us")
    print(f"  pydantic-ai plain function tool:                     {plain_seconds * 1e6:8.1f} us")
    print(f"  Colony's share per call: {(colony_seconds - plain_seconds) * 1e6:.1f} us")
    print(f"  ratio {ratio:.2f} (target <= {TARGET}): {'ok' if ratio <= TARGET else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
