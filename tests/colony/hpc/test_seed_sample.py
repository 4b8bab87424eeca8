"""Seed 000's sample HPC tool, copied as written, runs against the HPC service on moto; bad hooks are refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from colony import ToolSpec, action_executor
from colony.errors import ToolExecutionError
from colony.hpc import (
    HPCLimits,
    HPCSettings,
    HPCToolCapability,
    InProcessJobRunner,
    InputArtifact,
    InputArtifactDescriptor,
    PollPolicy,
    job_name,
)
from colony.spec import ExecutionLocality, GpuRequirement, ResourceRequirements
from tests.services.hpc import HPCStack

ROOMY = HPCLimits(max_vcpus=16, max_memory_gb=64, max_gpus=1, max_wallclock_seconds=86400)


def parse_openems_h5(path: Path) -> dict[str, Any]:
    """Stands in for the sample's HDF5 reader: the test's job writes its fields as JSON."""
    return json.loads(path.read_text())


# fmt: off
# ---- seed 000, "HPCToolCapability — dispatches to AWS Batch", as written ----
class OpenEMSFdtdCapability(HPCToolCapability):
    spec = ToolSpec(
        name="openems_fdtd",
        capabilities=("run_em_fdtd",),
        backend="http_api",
        execution_locality=ExecutionLocality.HPC,
        resource_requirements=ResourceRequirements(
            min_vcpus=8, min_memory_gb=64,
            gpu=GpuRequirement(kind="a100", count=1, memory_gb=40),
            expected_wallclock_seconds=21600,
        ),
    )

    def _hpc_domain_tags(self) -> frozenset[str]:
        return frozenset({"em", "fdtd"})

    def _build_input_artifacts(self, call_args):
        deck = self._render_simulation_deck(call_args)
        return ((
            InputArtifactDescriptor(key="sim.xml", size_bytes=len(deck)),
            deck.encode(),
            "application/xml",
        ),)

    def _parse_output_artifacts(self, artifacts):
        return parse_openems_h5(artifacts["fields.h5"])

    @action_executor()
    async def run_em_fdtd(
        self, *,
        geometry_step: str,
        excitation_freq_hz: float,
        mesh_resolution_m: float = 1e-3,
    ) -> dict[str, Any]:
        result = await self._submit_hpc_job(
            {"freq_hz": excitation_freq_hz, "mesh_resolution": mesh_resolution_m},
        )
        return result
# ---- end of the sample ----
# fmt: on


def render_simulation_deck(self: OpenEMSFdtdCapability, call_args: Mapping[str, Any]) -> str:
    """The deck renderer the sample calls but does not show."""
    return f'<openEMS><FDTD f0="{call_args["freq_hz"]}" mesh="{call_args["mesh_resolution"]}"/></openEMS>'


OpenEMSFdtdCapability._render_simulation_deck = render_simulation_deck  # type: ignore[attr-defined]

ARGS = {"freq_hz": 2.4e9, "mesh_resolution": 1e-3}


def test_the_sample_s_hpc_domain_tags_are_its_tags() -> None:
    assert OpenEMSFdtdCapability().get_capability_tags() == {"tool", "general", "hpc", "em", "fdtd"}


@pytest.fixture
def openems_stack(start_hpc: Callable[..., HPCStack]) -> HPCStack:
    return start_hpc(job_definitions={"openems_fdtd": "colony-echo"}, limits=ROOMY)


async def test_the_sample_runs_as_written(openems_stack: HPCStack, tmp_path: Path) -> None:
    deck = render_simulation_deck(OpenEMSFdtdCapability(), ARGS)
    (tmp_path / "sim.xml").write_text(deck)
    name = job_name(OpenEMSFdtdCapability.spec, ARGS, [InputArtifact(key="sim.xml", path=tmp_path / "sim.xml")])
    openems_stack.put_output(name, "fields.h5", json.dumps({"s11_db": -17.5}).encode())
    tool = OpenEMSFdtdCapability(
        client=openems_stack.client,
        settings=openems_stack.settings,
        runner=InProcessJobRunner(),
        poll_policy=PollPolicy(initial_seconds=0.05, max_seconds=0.2),
    )
    assert (await tool.invoke("check_preconditions"))["ok"] is True
    result = await tool.invoke("run_em_fdtd", {"geometry_step": "board.step", "excitation_freq_hz": 2.4e9})
    assert result == {"s11_db": -17.5}
    s3 = openems_stack.aws.client("s3")
    uploaded = s3.get_object(Bucket="colony-hpc", Key=openems_stack.key(name, "inputs/sim.xml"))
    assert uploaded["Body"].read().decode() == deck
    assert uploaded["ContentType"] == "application/xml"
    (job,) = openems_stack.batch_jobs(name)
    assert job["status"] == "SUCCEEDED"


# -- hooks in a shape neither form allows are refused when the class is created ------------


def spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, capabilities=("run",), execution_locality=ExecutionLocality.HPC)


class Base(HPCToolCapability):
    __abstract_tool__ = True

    @action_executor
    async def run(self) -> Any:
        """Run once.

        Returns:
            The parsed outputs.
        """
        return await self._submit_hpc_job({})

    def _parse_output_artifacts(self, artifacts: Mapping[str, Path]) -> Any:
        return dict(artifacts)


def test_a_build_hook_of_neither_form_is_refused_naming_both() -> None:
    with pytest.raises(TypeError) as caught:

        class NoArgs(Base):
            spec = spec("no_args")

            def _build_input_artifacts(self):  # type: ignore[override]
                return ()

    message = str(caught.value)
    assert "NoArgs._build_input_artifacts takes 0 positional argument(s)" in message
    assert "(self, call_args, workdir) -> Iterable[InputArtifact]" in message
    assert "(self, call_args) -> Iterable[tuple[InputArtifactDescriptor, bytes, str]]" in message

    with pytest.raises(TypeError, match=r"takes 3 positional argument\(s\)"):

        class ThreeArgs(Base):
            spec = spec("three_args")

            def _build_input_artifacts(self, call_args, workdir, extra):  # type: ignore[override]
                return ()


def test_an_async_hook_is_refused() -> None:
    with pytest.raises(TypeError, match=r"_build_input_artifacts is async \(it must be a plain def\)"):

        class Async(Base):
            spec = spec("async_build")

            async def _build_input_artifacts(self, call_args):  # type: ignore[override]
                return ()


def test_bad_tag_and_parse_hooks_are_refused() -> None:
    with pytest.raises(TypeError, match=r"_hpc_domain_tags must take no arguments.*frozenset\[str\]"):

        class Tags(Base):
            spec = spec("tags")

            def _build_input_artifacts(self, call_args):  # type: ignore[override]
                return ()

            def _hpc_domain_tags(self, extra):  # type: ignore[override]
                return frozenset()

    with pytest.raises(TypeError, match=r"_parse_output_artifacts takes 2 positional.*key -> local Path"):

        class Parse(Base):
            spec = spec("parse")

            def _build_input_artifacts(self, call_args):  # type: ignore[override]
                return ()

            def _parse_output_artifacts(self, artifacts, extra):  # type: ignore[override]
                return None


# -- what a seed-form hook returns is checked before anything is uploaded --------------------


def built(returned: Any, *, seed_form: bool = True) -> type[Base]:
    if seed_form:

        class SeedForm(Base):
            spec = spec("seed_form")

            def _build_input_artifacts(self, call_args):  # type: ignore[override]
                return returned

        return SeedForm

    class OurForm(Base):
        spec = spec("our_form")

        def _build_input_artifacts(self, call_args, workdir):  # type: ignore[override]
            return returned

    return OurForm


class NeverRuns:
    async def run(self, job: Any) -> dict[str, str]:
        raise AssertionError("a malformed hook must fail before the job is handed to a runner")


@pytest.mark.parametrize(
    ("returned", "seed_form", "named"),
    [
        ([(InputArtifactDescriptor(key="a.xml", size_bytes=9), b"abc", "text/xml")], True, "size_bytes is 9"),
        ([(InputArtifactDescriptor(key="a.xml", size_bytes=3), "abc", "text/xml")], True, "content is a str"),
        ([(InputArtifactDescriptor(key="a.xml", size_bytes=3), b"abc")], True, "is not a (InputArtifactDescriptor"),
        (
            [(InputArtifactDescriptor(key="a.xml", size_bytes=3, content_type="text/plain"), b"abc", "text/xml")],
            True,
            "the descriptor says 'text/plain' but the tuple says 'text/xml'",
        ),
        ([({"key": "a.xml"}, b"abc", "text/xml")], True, "dict is not an InputArtifactDescriptor"),
        ("sim.xml", True, "returned str, not an iterable"),
        ([(InputArtifactDescriptor(key="a.xml", size_bytes=3), b"abc", "text/xml")], False, "not an InputArtifact"),
    ],
)
async def test_a_malformed_return_is_an_error_naming_the_item(returned: Any, seed_form: bool, named: str) -> None:
    settings = HPCSettings(token=SecretStr("t"), limits=ROOMY)
    tool = built(returned, seed_form=seed_form)(settings=settings, runner=NeverRuns())
    with pytest.raises(ToolExecutionError) as caught:
        await tool.invoke("run")
    assert named in str(caught.value) and "_build_input_artifacts" in str(caught.value)
