"""An agent spec naming a connected server runs a model loop over its tools, governed like any other."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from colony.agents import AgentSpec, assemble, run
from colony.errors import AgentSpecError
from colony.kernel import ColonyKernel
from colony.runtime import KernelProvider, Runtime
from tests.colony.agents.harness import Script
from tests.services.upstream import Upstream

CASE = {
    "rationale": "Write the survey notes where the reviewer reads them",
    "rollback_plan": "Delete notes.txt again; nothing else is touched",
    "evidence": {"tests": ["tests/test_notes.py::test_layout"], "scope": ["notes.txt"]},
}


@pytest.fixture
async def runtime(third_party: Upstream) -> AsyncIterator[Runtime]:
    """A runtime over the home where ``third_party`` pinned server-everything and server-filesystem."""
    made = Runtime(kernels=KernelProvider(ColonyKernel.from_env()))
    yield made
    await made.aclose()


async def test_an_agent_naming_a_server_mounts_its_tools_and_runs_over_them(runtime: Runtime, files_root: Path) -> None:
    ColonyKernel.from_env().set_trust("surveyor", 0.8)
    agent = assemble(AgentSpec(name="surveyor", capabilities=("files", "everything__get_sum")), runtime)
    names = {entry.name for entry in agent.menu()}
    assert {"write_file", "read_text_file", "list_allowed_directories", "get_sum"} <= names
    notes = files_root / "notes.txt"
    script = Script(
        [
            [("get_sum", {"a": 12, "b": 30}), ("list_allowed_directories", {})],
            [("write_file", {"path": str(notes), "content": "42 transects", **CASE})],
            "Wrote the notes.",
        ]
    )
    result = await run(agent, "Count and write the notes", model=script.model)
    assert result.output == "Wrote the notes."
    answers = dict(script.returns())
    assert "42" in str(answers["get_sum"]) and str(files_root) in str(answers["list_allowed_directories"])
    assert notes.read_text() == "42 transects"


async def test_a_governed_upstream_call_without_a_case_is_steered_back_to_the_model(
    runtime: Runtime, files_root: Path
) -> None:
    agent = assemble(AgentSpec(name="stranger", capabilities=("files",)), runtime)  # new: no trust earned
    notes = files_root / "notes.txt"
    script = Script([[("write_file", {"path": str(notes), "content": "x"})], "Gave up."])
    result = await run(agent, "Write", model=script.model)
    assert result.output == "Gave up." and not notes.exists()
    assert "changes the world, so the gate judges it: give a rationale" in str(dict(script.returns())["write_file"])


async def test_an_agent_naming_an_unknown_server_is_told_so(runtime: Runtime) -> None:
    with pytest.raises(AgentSpecError, match="unknown tool 'nothere'"):
        assemble(AgentSpec(name="lost", capabilities=("nothere",)), runtime)
