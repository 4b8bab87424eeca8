"""Whether an action is governed is decided once, when its class is created, and nothing rewrites it.

A governed action (one that changes the world, or costs) passes the gate. The answer is
stored on the class's frozen action definitions: patching the spec or the class's flag
afterwards, shadowing the flag on an instance, assigning to a definition, or defining a
subclass that would lower it leaves every reader (the runtime, the menu an agent offers,
the served definition) with the same answer: governed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from colony import LocalToolCapability, ToolSpec, action_executor
from colony.agents import AgentSpec, assemble
from colony.capability import ActionDefinition
from colony.catalog import ToolEntry
from colony.errors import ToolInputError
from colony.kernel import ColonyKernel
from colony.runtime import GOVERNANCE_PROPERTIES, CallRequest, CallStatus, Catalog, KernelProvider, Principal, Runtime
from colony.spec import CostModel
from tests.security.conftest import CASE


class Scribe(LocalToolCapability):
    """Writes a file: side-effecting, so governed."""

    spec = ToolSpec(name="scribe", capabilities=("inscribe",), side_effecting=True)

    @action_executor
    def inscribe(self, *, path: str, text: str) -> dict[str, str]:
        """Write ``text`` to ``path``.

        Args:
            path: File to write.
            text: Content.

        Returns:
            {"path": path}.
        """
        Path(path).write_text(text, encoding="utf-8")
        return {"path": path}


ENTRY = ToolEntry(name="scribe", capability="inscribe", capability_fqn=f"{__name__}.Scribe")
ORIGINAL = Scribe.actions()["inscribe"]


def lowered_spec() -> ToolSpec:
    return Scribe.spec.model_copy(update={"side_effecting": False, "cost_model": CostModel()})


def test_a_definition_cannot_be_rewritten() -> None:
    definition = Scribe.actions()["inscribe"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.governed = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.side_effecting = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        Scribe.actions()["inscribe"] = dataclasses.replace(definition, governed=False)  # type: ignore[index]
    assert Scribe.actions()["inscribe"].governed


def test_a_definition_not_yet_decided_reads_as_governed() -> None:
    undecided = ActionDefinition(
        name=ORIGINAL.name,
        func=ORIGINAL.func,
        description=ORIGINAL.description,
        input_model=ORIGINAL.input_model,
        input_schema=ORIGINAL.input_schema,
        is_async=False,
        declared=ORIGINAL.declared,
        docstring_sections=ORIGINAL.docstring_sections,
    )
    assert undecided.governed and undecided.side_effecting
    assert not undecided.cacheable and not undecided.retriable


async def test_patching_the_spec_or_the_flag_after_creation_changes_no_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Scribe, "spec", lowered_spec())
    monkeypatch.setattr(Scribe, "side_effecting", False)
    instance = Scribe()
    instance.side_effecting = False  # type: ignore[misc]
    assert instance.action_side_effecting("inscribe") and Scribe.actions()["inscribe"].governed

    runtime = Runtime(Catalog(entries={"scribe": ENTRY}), kernels=KernelProvider(ColonyKernel.from_env()))
    tool = runtime.catalog.resolve("scribe")
    assert tool.governed("inscribe") and tool.side_effecting("inscribe")
    target = tmp_path / "written.txt"
    bare = CallRequest(tool="scribe", arguments={"path": str(target), "text": "x"})
    with pytest.raises(ToolInputError, match="rationale"):  # the gate asks for the case
        await runtime.call(bare, Principal.of("newcomer", {"tool:*"}))
    request = CallRequest(tool="scribe", arguments={"path": str(target), "text": "x"}, **CASE)
    outcome = await runtime.call(request, Principal.of("newcomer", {"tool:*"}))
    await runtime.pool.shutdown()
    assert outcome.governed and outcome.status is CallStatus.REFUSED  # judged: a newcomer has no trust to write
    assert not target.exists()

    agent = assemble(AgentSpec(name="scribbler", capabilities=["scribe"]), runtime)
    [entry] = [entry for entry in agent.menu() if entry.action == "inscribe"]
    assert agent.governed(entry) and entry.side_effecting
    assert set(GOVERNANCE_PROPERTIES) <= set(entry.input_schema["properties"])  # the model is asked for its case


def test_a_subclass_declaring_the_action_a_read_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot make an action its base governs ungoverned"):

        class QuietScribe(Scribe):
            @action_executor(side_effecting=False)
            def inscribe(self, *, path: str, text: str) -> dict[str, str]:
                """Write ``text`` to ``path``, declared a read."""
                return {"path": path}

    assert Scribe.actions()["inscribe"] is ORIGINAL


def test_a_subclass_lowering_the_spec_is_refused() -> None:
    with pytest.raises(TypeError, match=r"inscribe: a subclass cannot make an action its base governs ungoverned"):

        class FreeScribe(Scribe):
            spec = lowered_spec()

    assert Scribe.actions()["inscribe"] is ORIGINAL


def test_a_subclass_deciding_its_actions_its_own_way_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot make an action its base governs ungoverned"):

        class LaxScribe(Scribe):
            @classmethod
            def _decide(cls, definition: ActionDefinition) -> ActionDefinition:
                return dataclasses.replace(super()._decide(definition), governed=False)

    assert Scribe.actions()["inscribe"] is ORIGINAL


def test_an_override_without_a_marker_stays_governed_and_leaves_its_base_alone() -> None:
    class LoudScribe(Scribe):
        def inscribe(self, *, path: str, text: str) -> dict[str, str]:  # type: ignore[override]
            return super().inscribe(path=path, text=text.upper())

    assert LoudScribe.actions()["inscribe"].governed
    assert LoudScribe.actions()["inscribe"] is not ORIGINAL
    assert Scribe.actions()["inscribe"] is ORIGINAL
