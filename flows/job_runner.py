"""The HPC job runner that runs each job as the ``hpc-job`` flow, installed by importing ``flows``.

It lives apart from ``flows.hpc_job`` so that installing it costs nothing: the flow and its
tasks are imported with the first job, not by every process that imports ``flows`` (each
deployment run's process does, and most never submit an HPC job).
"""

from __future__ import annotations

from colony.hpc import HPCJob, JobRunner, set_default_job_runner

__all__ = ["PrefectJobRunner", "use_prefect_job_runner"]


class PrefectJobRunner:
    """Runs each HPC job as the ``hpc-job`` flow (a subflow when called inside a flow run)."""

    async def run(self, job: HPCJob) -> dict[str, str]:
        from flows.hpc_job import HPCJobRequest, hpc_job  # loaded with the first job

        return await hpc_job(HPCJobRequest(**dict(job)))


def use_prefect_job_runner() -> JobRunner:
    """Make the ``hpc-job`` flow this process's HPC job runner; the runner it replaces."""
    return set_default_job_runner(PrefectJobRunner())
