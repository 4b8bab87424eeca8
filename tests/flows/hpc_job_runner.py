"""Run the hpc-job flow in its own process (so a test can kill it): ``python -m tests.flows.hpc_job_runner REQUEST``."""

import asyncio
import sys
from pathlib import Path

from flows.hpc_job import HPCJobRequest, hpc_job

if __name__ == "__main__":
    asyncio.run(hpc_job(HPCJobRequest.model_validate_json(Path(sys.argv[1]).read_text())))
