"""HPCToolCapability: a tool whose work runs on AWS Batch, through the HPC REST service.

A subclass turns a call into input files (``_build_input_artifacts``) and the
job's output files into a result (``_parse_output_artifacts``); its action calls
``_submit_hpc_job(args)``, which runs the ``hpc_job`` flow: submit, upload,
poll, fetch. That flow is the one seam from ``colony/`` into ``flows/``, and it
is imported only when a job runs.
"""

from __future__ import annotations

import functools
import tempfile
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from colony.capability import ToolCapability
from colony.errors import HPCLimitError, HPCTimeoutError, HPCUnavailableError
from colony.hpc.client import HPCClient, HPCClientConfig
from colony.hpc.cycle import InputArtifact, PollPolicy, job_name
from colony.hpc.settings import HPCSettings

if TYPE_CHECKING:
    from colony.agents import Agent

__all__ = ["HPCToolCapability", "default_client", "default_settings"]


@functools.cache
def default_settings() -> HPCSettings:
    """The process's HPC settings, read once from ``COLONY_HPC_*``."""
    return HPCSettings()


@functools.cache
def default_client() -> HPCClient:
    """The process's HPC client, built once from the configured endpoint."""
    settings = default_settings()
    return HPCClient(
        HPCClientConfig(
            endpoint=settings.endpoint, token=settings.token, timeout_seconds=settings.request_timeout_seconds
        )
    )


class HPCToolCapability(ToolCapability):
    """A tool that runs as an AWS Batch job; inputs and outputs travel through S3."""

    __abstract_tool__ = True
    retryable_errors: ClassVar[tuple[type[BaseException], ...]] = (HPCUnavailableError, HPCTimeoutError)
    isolated: ClassVar[bool] = True

    def __init__(
        self,
        *,
        agent: Agent | None = None,
        client: HPCClient | None = None,
        settings: HPCSettings | None = None,
        workdir: Path | None = None,
        poll_policy: PollPolicy | None = None,
    ) -> None:
        super().__init__(agent=agent)
        self._client = client
        self._settings = settings
        self._workdir = workdir
        self.poll_policy = poll_policy or PollPolicy()

    @property
    def client(self) -> HPCClient:
        """The injected client, or the process's one."""
        return self._client or default_client()

    @property
    def settings(self) -> HPCSettings:
        """The injected settings, or the process's ones."""
        return self._settings or default_settings()

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
    def _build_input_artifacts(self, call_args: Mapping[str, Any], workdir: Path) -> list[InputArtifact]:
        """Write the job's input files for this call under ``workdir``; describe each."""

    @abstractmethod
    def _parse_output_artifacts(self, artifacts: Mapping[str, Path]) -> Any:
        """Turn the job's output files (by key) into the action's result."""

    async def _submit_hpc_job(self, args: Mapping[str, Any]) -> Any:
        """Run one job for ``args``: submit, upload, poll, fetch; the parsed outputs.

        The same deterministic call twice is served from the first job's outputs.
        """
        from flows.hpc_job import HPCJobRequest, hpc_job

        violations = self.settings.limits.violations(self.spec.resource_requirements)
        if violations:
            raise HPCLimitError(violations)
        with tempfile.TemporaryDirectory(prefix="colony-hpc-", dir=self._workdir) as scratch:
            root = Path(scratch)
            (root / "inputs").mkdir()
            artifacts = self._build_input_artifacts(args, root / "inputs")
            request = HPCJobRequest(
                client=self.client.config,
                tool=self.spec.name,
                name=job_name(self.spec, args, artifacts),
                artifacts=artifacts,
                parameters={key: str(value) for key, value in args.items()},
                resources=self.spec.resource_requirements,
                poll=self.poll_policy,
                output_dir=root / "outputs",
            )
            outputs = await hpc_job(request)
            return self._parse_output_artifacts({key: Path(path) for key, path in outputs.items()})
