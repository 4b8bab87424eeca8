"""Prefect flows: each importable from agent code and deployable from prefect.yaml.

Every flow is a plain (synchronous) Prefect flow; ``in_thread`` runs one from async
code without blocking the event loop. Importing ``flows`` makes the ``hpc-job`` flow
the process's HPC job runner (``colony`` alone runs HPC jobs in-process).
"""

from flows._async import in_thread
from flows.job_runner import use_prefect_job_runner

use_prefect_job_runner()

__all__ = ["in_thread"]
