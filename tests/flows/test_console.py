"""A flow run whose worker died (its stdout and stderr are broken pipes) runs on and logs to the API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from uuid import uuid4

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName, LogFilter, LogFilterFlowRunId
from prefect.client.schemas.objects import FlowRun

from flows.deployments import FLOW_RUN_ENV
from tests.services.prefect import PrefectServer, prefect_api

ORPHANED_FLOW = """
import logging
import sys

from prefect import flow, get_run_logger


@flow(name="orphaned-run")
def orphaned() -> str:
    logger = get_run_logger()
    console = type(logging.getLogger().handlers[0]).__name__
    logger.info("console handler: %s", console)
    print("a print to the dead console")
    for line in range(3):
        logger.info("still logging, line %d", line)
    return "done"


orphaned.with_options(flow_run_name=sys.argv[1])()
"""


def run_with_dead_console(server: PrefectServer, tmp_path: Path, env: dict[str, str]) -> FlowRun:
    """Run the flow in a process whose stdout and stderr are pipes nobody reads any more."""
    script = tmp_path / "orphaned.py"
    script.write_text(ORPHANED_FLOW)
    name = f"orphaned-{uuid4()}"
    reader, writer = os.pipe()
    os.close(reader)  # the worker that read them is gone
    try:
        subprocess.run(
            [sys.executable, str(script), name],
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=writer,
            env=server.env(**env),
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    with prefect_api(server.api_url), get_client(sync_client=True) as client:
        [flow_run] = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name])))
    return flow_run


def test_a_flow_run_outlives_its_console_and_keeps_logging(prefect_server: PrefectServer, tmp_path: Path) -> None:
    flow_run = run_with_dead_console(prefect_server, tmp_path, FLOW_RUN_ENV)
    with prefect_api(prefect_server.api_url), get_client(sync_client=True) as client:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run.id])))
    state = flow_run.state
    assert state is not None and state.is_completed(), state
    messages = [log.message for log in logs]
    assert "console handler: DetachableConsoleHandler" in messages
    assert "still logging, line 2" in messages


def test_without_it_the_run_crashes_at_its_first_log_line(prefect_server: PrefectServer, tmp_path: Path) -> None:
    """Prefect's own console handler exits the process on a broken pipe (what the fix is for)."""
    state = run_with_dead_console(prefect_server, tmp_path, {}).state
    assert state is not None and not state.is_completed(), state
