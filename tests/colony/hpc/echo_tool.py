"""A small HPC tool on the test stack's ``echo`` job definition, and how to play its job's part."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from colony import ToolSpec, action_executor
from colony.hpc import HPCToolCapability, InputArtifact, job_name
from colony.spec import Backend, ExecutionLocality, ResourceRequirements
from tests.services.hpc import HPCStack


class EchoJob(HPCToolCapability):
    """Send a line of text through an AWS Batch job and read back what the job wrote."""

    spec = ToolSpec(
        name="echo",
        description="Round-trips text through an AWS Batch job.",
        capabilities=("run_echo",),
        backend=Backend.HTTP_API,
        execution_locality=ExecutionLocality.HPC,
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.5, expected_wallclock_seconds=60),
    )

    @action_executor
    async def run_echo(self, *, text: str) -> str:
        """Echo ``text`` through a Batch job.

        Args:
            text: The line to send.

        Returns:
            What the job wrote to out.txt.
        """
        result: str = await self._submit_hpc_job({"text": text})
        return result

    def _build_input_artifacts(self, call_args: Mapping[str, Any], workdir: Path) -> list[InputArtifact]:
        path = workdir / "in.txt"
        path.write_text(str(call_args["text"]))
        return [InputArtifact(key="in.txt", path=path, content_type="text/plain")]

    def _parse_output_artifacts(self, artifacts: Mapping[str, Path]) -> str:
        return artifacts["out.txt"].read_text()


def echo_job_name(tmp_path: Path, text: str) -> str:
    """The name EchoJob's call with ``text`` runs under (to write its outputs ahead of it)."""
    path = tmp_path / "expected-in.txt"
    path.write_text(text)
    return job_name(EchoJob.spec, {"text": text}, [InputArtifact(key="in.txt", path=path, content_type="text/plain")])


def play_echo(stack: HPCStack, tmp_path: Path, text: str, answer: str) -> str:
    """Write the outputs the job for ``text`` will have produced; its name."""
    name = echo_job_name(tmp_path, text)
    stack.put_output(name, "out.txt", answer.encode())
    return name
