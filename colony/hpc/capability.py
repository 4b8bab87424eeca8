"""HPCToolCapability: a tool whose work runs on AWS Batch, through the HPC REST service.

A subclass turns a call into input files (``_build_input_artifacts``) and the
job's output files into a result (``_parse_output_artifacts``); its action calls
``_submit_hpc_job(args)``, which hands the job to a ``JobRunner``: the one given
to the tool, else the process's default (in-process unless the Prefect layer
installed its flow). Both seed 000's hook forms and ours work; see
``colony.hpc.hooks``.
"""

from __future__ import annotations

import tempfile
from abc import abstractmethod
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from colony.capability import ToolCapability
from colony.errors import HPCLimitError, HPCTimeoutError, HPCUnavailableError
from colony.hpc.client import HPCClient
from colony.hpc.cycle import PollPolicy, job_name
from colony.hpc.defaults import default_client, default_settings
from colony.hpc.hooks import build_arity, check_hooks, materialize_inputs
from colony.hpc.job_steps import HPCJob
from colony.hpc.runner import JobRunner, default_job_runner
from colony.hpc.settings import HPCSettings

__all__ = ["HPCToolCapability", "default_client", "default_settings"]


class HPCToolCapability(ToolCapability):
    """A tool that runs as an AWS Batch job; inputs and outputs travel through S3."""

    __abstract_tool__ = True
    retryable_errors: ClassVar[tuple[type[BaseException], ...]] = (HPCUnavailableError, HPCTimeoutError)
    isolated: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_hooks(cls)

    def __init__(
        self,
        *,
        client: HPCClient | None = None,
        settings: HPCSettings | None = None,
        workdir: Path | None = None,
        poll_policy: PollPolicy | None = None,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__()
        self._client = client
        self._settings = settings
        self._workdir = workdir
        self._runner = runner
        self.poll_policy = poll_policy or PollPolicy()

    @property
    def client(self) -> HPCClient:
        """The injected client, or the process's one."""
        return self._client or default_client()

    @property
    def settings(self) -> HPCSettings:
        """The injected settings, or the process's ones."""
        return self._settings or default_settings()

    @property
    def runner(self) -> JobRunner:
        """The injected job runner, or the process's default."""
        return self._runner or default_job_runner()

    def _hpc_domain_tags(self) -> frozenset[str]:
        """Domain tags an HPC tool adds (seed 000's hook; ``_domain_tags`` works the same)."""
        return frozenset()

    def get_capability_tags(self) -> frozenset[str]:
        return super().get_capability_tags() | self._hpc_domain_tags()

    def _describe_tool_extras(self) -> list[str]:
        return ["Runs as an AWS Batch job through the HPC service; inputs and outputs travel through S3."]

    def _precondition_warnings(self) -> list[str]:
        warnings = super()._precondition_warnings()
        warnings += [
            f"operator limit {text}" for text in self.settings.limits.violations(self.spec.resource_requirements)
        ]
        if self.spec.name not in self.settings.job_definitions:
            warnings.append(f"no AWS Batch job definition is configured for {self.spec.name!r}")
        return warnings

    @abstractmethod
    def _build_input_artifacts(self, call_args: Mapping[str, Any], workdir: Path) -> Iterable[Any]:
        """The job's input files for this call, in either form ``colony.hpc.hooks`` documents.

        Ours writes each file under ``workdir`` and returns ``InputArtifact``s; seed 000's
        takes only ``call_args`` and returns ``(InputArtifactDescriptor, bytes, mime)`` tuples.
        """

    @abstractmethod
    def _parse_output_artifacts(self, artifacts: Mapping[str, Path]) -> Any:
        """Turn the job's output files (output key -> local path) into the action's result."""

    async def _submit_hpc_job(self, args: Mapping[str, Any]) -> Any:
        """Run one job for ``args``: submit, upload, poll, fetch; the parsed outputs.

        The same deterministic call twice is served from the first job's outputs.
        """
        violations = self.settings.limits.violations(self.spec.resource_requirements)
        if violations:
            raise HPCLimitError(violations)
        with tempfile.TemporaryDirectory(prefix="colony-hpc-", dir=self._workdir) as scratch:
            root = Path(scratch)
            (root / "inputs").mkdir()
            arity = build_arity(type(self))
            hook: Any = self._build_input_artifacts
            returned = hook(args, root / "inputs") if arity == 2 else hook(args)
            artifacts = materialize_inputs(self.spec.name, returned, arity, root / "inputs")
            job = HPCJob(
                client=self.client.config,
                tool=self.spec.name,
                name=job_name(self.spec, args, artifacts),
                artifacts=artifacts,
                parameters={key: str(value) for key, value in args.items()},
                resources=self.spec.resource_requirements,
                poll=self.poll_policy,
                output_dir=root / "outputs",
            )
            outputs = await self.runner.run(job)
            return self._parse_output_artifacts({key: Path(path) for key, path in outputs.items()})
