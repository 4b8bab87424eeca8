"""``colony up``: the Prefect server and UI, and every Colony deployment served.

Starts ``prefect server`` (UI included) unless ``PREFECT_API_URL`` already names a server,
then serves every deployment in this process until Ctrl-C. Everything runs on the
embedded defaults: SQLite for Prefect (under PREFECT_HOME) and for the kernel (COLONY_HOME).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated

import httpx
import typer
from rich.console import Console

console = Console()
STARTUP_SECONDS = 120


@contextlib.contextmanager
def prefect_server(host: str, port: int) -> Iterator[str]:
    """A ``prefect server start`` subprocess, stopped on exit; yields its API URL."""
    api_url = f"http://{host}:{port}/api"
    command = [str(Path(sys.executable).parent / "prefect"), "server", "start", "--host", host, "--port", str(port)]
    # The embedded server sends no usage telemetry unless the user asked for it.
    environment = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", **os.environ}
    # Its own session, so Ctrl-C reaches the runner first and the API outlives the runner's shutdown.
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True, env=environment)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _healthy(api_url):
            if process.poll() is not None:
                raise typer.Exit(code=process.returncode or 1)
            if time.monotonic() > deadline:
                console.print(f"[red]error:[/red] the Prefect server did not answer on {api_url}")
                raise typer.Exit(code=1)
            time.sleep(0.5)
        yield api_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _interrupt_as_termination(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C stops the runner the way SIGTERM does: in-flight runs cancelled, then exit."""
    os.kill(os.getpid(), signal.SIGTERM)


def _healthy(api_url: str) -> bool:
    try:
        return httpx.get(f"{api_url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def up(
    host: Annotated[str, typer.Option(help="Address the Prefect server listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the Prefect server and its UI.")] = 4200,
    tick_interval: Annotated[float, typer.Option(help="Seconds between colony ticks.")] = 60.0,
) -> None:
    """Start Prefect (server and UI) and serve every Colony deployment until Ctrl-C."""
    from prefect import serve
    from prefect.settings import PREFECT_API_URL, temporary_settings

    configured = os.environ.get("PREFECT_API_URL")
    with contextlib.ExitStack() as stack:
        api_url = configured or stack.enter_context(prefect_server(host, port))
        os.environ["PREFECT_API_URL"] = api_url
        stack.enter_context(temporary_settings({PREFECT_API_URL: api_url}))
        deployments = importlib.import_module("flows.deployments").deployments(tick_interval_seconds=tick_interval)
        ui_url = api_url.removesuffix("/api")
        console.print(f"[bold]Colony is up.[/bold] Prefect UI: {ui_url}  API: {api_url}")
        for deployment in deployments:
            console.print(f"  serving {deployment.flow_name}/{deployment.name}")
        console.print(f"  deployments: {ui_url}/deployments   Ctrl-C stops everything")
        signal.signal(signal.SIGINT, _interrupt_as_termination)
        serve(*deployments, print_starting_message=False)
    console.print("Colony stopped.")
