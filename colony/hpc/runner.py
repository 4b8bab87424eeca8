"""The JobRunner seam: how an HPC tool's job gets run.

``HPCToolCapability._submit_hpc_job`` hands its job to a runner. The default,
``InProcessJobRunner``, runs the cycle in this process. The Prefect layer
brings its own (``flows.hpc_job.PrefectJobRunner``: the ``hpc-job`` flow, with
a task per step, retries and a progress artifact) and installs it with
``set_default_job_runner``, or a tool takes one as ``runner=``: nothing in
``colony`` imports ``flows``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol, runtime_checkable

from colony.hpc.client import HPCClient
from colony.hpc.cycle import Clock, Sleep
from colony.hpc.job_steps import ClientSteps, HPCJob, run_cycle

__all__ = ["InProcessJobRunner", "JobRunner", "default_job_runner", "set_default_job_runner"]

_LOG = logging.getLogger("colony.hpc")


@runtime_checkable
class JobRunner(Protocol):
    """Runs one HPC job to completion."""

    async def run(self, job: HPCJob) -> dict[str, str]:
        """Run ``job``; the local paths of its downloaded outputs, by output key.

        Raises:
            HPCError: the service refused, the job failed or timed out (see ``colony.errors``).
        """
        ...


class InProcessJobRunner:
    """Runs the cycle here, with plain client calls; time is injectable for tests."""

    def __init__(self, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        self.clock, self.sleep = clock, sleep

    async def run(self, job: HPCJob) -> dict[str, str]:
        steps = ClientSteps(HPCClient(job.client_config()), logger=_LOG, clock=self.clock, sleep=self.sleep)
        return await run_cycle(job, steps, _LOG)


_default: list[JobRunner] = [InProcessJobRunner()]


def default_job_runner() -> JobRunner:
    """The runner an HPC tool uses when it was given none."""
    return _default[0]


def set_default_job_runner(runner: JobRunner | None) -> JobRunner:
    """Make ``runner`` the process's default (None: back to in-process); the previous one.

    Raises:
        TypeError: ``runner`` has no ``async run(job)``.
    """
    if runner is not None and not isinstance(runner, JobRunner):
        raise TypeError(f"{runner!r} is not a JobRunner: it needs `async def run(self, job: HPCJob) -> dict[str, str]`")
    previous = _default[0]
    _default[0] = runner if runner is not None else InProcessJobRunner()
    return previous
