import asyncio

import pytest

from colony.capability import LocalToolCapability, ToolCapability, action_executor
from colony.spec import (
    ExecutionLocality,
    GpuRequirement,
    ResourceRequirements,
    SecretRequirement,
    ToolSpec,
)


def test_concrete_tool_without_spec_fails_at_class_creation():
    with pytest.raises(TypeError, match=r"must declare `spec: ClassVar\[ToolSpec\]`"):

        class NoSpec(LocalToolCapability):
            @action_executor
            def act(self) -> str:
                """Act.

                Returns:
                    Nothing useful.
                """
                return ""


def test_spec_capability_must_name_an_action():
    with pytest.raises(TypeError) as caught:

        class Wrong(LocalToolCapability):
            spec = ToolSpec(name="wrong", capabilities=("compute_shielding_factor",))

            @action_executor
            def compute(self) -> str:
                """Compute.

                Returns:
                    Nothing useful.
                """
                return ""

    message = str(caught.value)
    assert "Wrong: no action of the class is named 'compute_shielding_factor'" in message
    assert "each capability key must equal the name of one of its @action_executor methods" in message
    assert "(its actions: ['check_preconditions', 'compute'])" in message


def test_signature_drift_from_declared_inputs_schema_fails():
    declared = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}},
        "required": ["n"],
        "additionalProperties": False,
    }
    with pytest.raises(TypeError, match=r"signature drifts from spec.inputs_schema.*minimum"):

        class Drifting(LocalToolCapability):
            spec = ToolSpec(name="drifting", capabilities=("count",), inputs_schema=declared)

            @action_executor
            def count(self, *, n: int) -> int:
                """Count.

                Args:
                    n: How many.

                Returns:
                    n.
                """
                return n


def test_declared_outputs_schema_enforced_when_return_is_unstructured():
    class Loose(LocalToolCapability):
        spec = ToolSpec(
            name="loose",
            capabilities=("emit",),
            outputs_schema={"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
        )

        @action_executor
        def emit(self, *, ok: bool) -> dict:  # type: ignore[type-arg]
            """Emit.

            Args:
                ok: Whether to emit a valid answer.

            Returns:
                {"ok": bool} or something invalid.
            """
            return {"ok": True} if ok else {"nope": 1}

    assert Loose().emit(ok=True) == {"ok": True}
    from colony.errors import ToolOutputError

    with pytest.raises(ToolOutputError, match="'ok' is a required property"):
        Loose().emit(ok=False)


class HeavyTool(LocalToolCapability):
    spec = ToolSpec(
        name="heavy_double",
        domain="em",
        capabilities=("simulate",),
        execution_locality=ExecutionLocality.HPC,
        resource_requirements=ResourceRequirements(
            min_vcpus=8,
            min_memory_gb=64,
            gpu=GpuRequirement(kind="a100", count=1, memory_gb=40),
            expected_wallclock_seconds=21600,
        ),
        secrets=(SecretRequirement(name="solver_licence", purpose="unlocks the solver"),),
        policy_tags=("network",),
    )

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"fdtd"})

    def _describe_tool_extras(self) -> list[str]:
        return ["Runs on the test double's imaginary cluster."]

    @action_executor
    def simulate(self) -> str:
        """Simulate.

        Returns:
            "done".
        """
        return "done"


def test_tags_always_include_tool_domain_and_locality():
    assert HeavyTool().get_capability_tags() == {"tool", "em", "hpc", "fdtd"}


def test_card_renders_spec_metadata_and_extras():
    card = HeavyTool().get_action_group_description()
    for fragment in (
        "heavy_double v1.0.0",
        "8 vCPU",
        "64 GB",
        "1x a100 (40 GB)",
        "~21600 s wall-clock",
        "autonomous",
        "Licence: unknown",
        "hpc via in_process",
        "deterministic",
        "Policy tags: network",
        "imaginary cluster",
    ):
        assert fragment in card


def test_check_preconditions_reports_missing_secret(monkeypatch):
    monkeypatch.delenv("COLONY_SECRET_SOLVER_LICENCE", raising=False)
    report = asyncio.run(HeavyTool().invoke("check_preconditions"))
    assert report["ok"] is False
    assert report["tool"] == "heavy_double"
    assert report["execution_locality"] == "hpc"
    assert report["resource_requirements"]["min_vcpus"] == 8
    assert report["warnings"] == ["secret 'solver_licence' is not configured"]
    monkeypatch.setenv("COLONY_SECRET_SOLVER_LICENCE", "x")
    assert asyncio.run(HeavyTool().invoke("check_preconditions"))["ok"] is True


def test_intermediate_base_may_skip_spec():
    class Base(ToolCapability):
        __abstract_tool__ = True

    class Concrete(Base):
        spec = ToolSpec(name="concrete", capabilities=("go",))

        @action_executor
        def go(self) -> str:
            """Go.

            Returns:
                "went".
            """
            return "went"

    assert Concrete().go() == "went"


def test_return_type_drift_from_declared_outputs_schema_fails():
    from typing_extensions import TypedDict

    class Answer(TypedDict):
        value: int

    with pytest.raises(TypeError, match=r"return type drifts from spec.outputs_schema.*'unit'"):

        class Drifting(LocalToolCapability):
            spec = ToolSpec(
                name="drifting_out",
                capabilities=("answer",),
                outputs_schema={
                    "type": "object",
                    "properties": {"value": {"type": "integer"}, "unit": {"type": "string"}},
                    "required": ["value", "unit"],
                },
            )

            @action_executor
            def answer(self) -> Answer:
                """Answer.

                Returns:
                    {"value"}.
                """
                return Answer(value=1)
