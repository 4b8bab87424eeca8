"""``colony up``: the Prefect server and UI, the HTTP gateway, and every Colony deployment served.

Starts ``prefect server`` (UI included) unless ``PREFECT_API_URL`` already names a server,
checks Colony's settings (that server's settings block, else ``COLONY_*``: what the gateway
and every flow run load), then starts the gateway (HTTP API and ``/mcp``) on loopback,
creates the zombie-run, lost-start and crash-recovery automations, and serves every deployment in this
process until Ctrl-C or SIGTERM, which stop all of it. The servers are children that die with
this process (``colony.cli.children``). Everything runs on the embedded defaults: SQLite for
Prefect (under PREFECT_HOME) and for the kernel (COLONY_HOME).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from colony.cli.children import child_process
from colony.cli.output import cli_console
from colony.cli.settings import command_settings

console = cli_console(soft_wrap=True)
BIN = Path(sys.executable).parent
GATEWAY_HOST = "127.0.0.1"  # open without tokens: loopback only (`colony gateway --host` for more)


@contextlib.contextmanager
def prefect_server(host: str, port: int) -> Iterator[str]:
    """A ``prefect server start`` child whose UI calls this API; yields its API URL."""
    api_url = f"http://{host}:{port}/api"
    # The embedded server sends no usage telemetry unless the user asked for it.
    environment = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", **os.environ}
    if not {"PREFECT_UI_API_URL", "PREFECT_SERVER_UI_API_URL"} & environment.keys():
        environment["PREFECT_UI_API_URL"] = api_url  # else the UI calls the default port, 4200
    command = [str(BIN / "prefect"), "server", "start", "--host", host, "--port", str(port)]
    with child_process("Prefect server", command, environment, f"{api_url}/health"):
        yield api_url


@contextlib.contextmanager
def gateway(port: int) -> Iterator[str]:
    """A ``colony gateway`` child on loopback; yields its base URL."""
    url = f"http://{GATEWAY_HOST}:{port}"
    command = [str(BIN / "colony"), "gateway", "--host", GATEWAY_HOST, "--port", str(port)]
    with child_process("gateway", command, dict(os.environ), f"{url}/health"):
        yield url


def _check_settings() -> None:
    """Load Colony's settings as the gateway and the flow runs will (the server's block, else COLONY_*).

    A bad variable or block is then one line before anything else starts, not a child that
    exits or a failed run.
    """
    command_settings()


def _interrupt_as_termination(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C stops the runner the way SIGTERM does: in-flight runs cancelled, then exit."""
    os.kill(os.getpid(), signal.SIGTERM)


def _exit_on_termination(signum: int, frame: FrameType | None) -> None:
    """SIGTERM before the runner takes over (it installs its own): unwind, stopping the servers."""
    raise SystemExit(0)


def up(
    host: Annotated[str, typer.Option(help="Address the Prefect server listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port of the Prefect server and its UI.")] = 4200,
    gateway_port: Annotated[
        int, typer.Option(min=1, max=65535, help="Port of the HTTP gateway and /mcp (on 127.0.0.1).")
    ] = 8787,
    tick_interval: Annotated[
        float | None, typer.Option(help="Seconds between colony ticks (default: prefect.yaml's).")
    ] = None,
) -> None:
    """Start Prefect (server and UI) and the gateway, and serve every Colony deployment until Ctrl-C."""
    from prefect import serve
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from colony.cli.zombies import ensure_automations

    deployments_module = importlib.import_module("flows.deployments")
    signal.signal(signal.SIGTERM, _exit_on_termination)
    signal.signal(signal.SIGINT, _interrupt_as_termination)
    configured = os.environ.get("PREFECT_API_URL")
    try:
        with contextlib.ExitStack() as stack:
            api_url = configured or stack.enter_context(prefect_server(host, port))
            os.environ["PREFECT_API_URL"] = api_url
            stack.enter_context(temporary_settings({PREFECT_API_URL: api_url}))
            _check_settings()  # what the gateway and every flow run below will load, checked once here
            gateway_url = stack.enter_context(gateway(gateway_port))
            # Only the flow runs served below get these (not the servers started above).
            os.environ.update(deployments_module.FLOW_RUN_ENV)
            os.environ.setdefault("COLONY_GATEWAY_URL", gateway_url)  # named in a held run's reviewer artifact
            ensure_automations()
            deployments = deployments_module.deployments(tick_interval_seconds=tick_interval)
            ui_url = api_url.removesuffix("/api")
            console.print("[bold]Colony is up.[/bold]")
            console.print(f"  Prefect UI:  {ui_url}")
            console.print(f"  Prefect API: {api_url}")
            console.print(f"  Gateway:     {gateway_url}  (OpenAPI docs: {gateway_url}/docs)")
            console.print(f"  MCP:         {gateway_url}/mcp")
            for deployment in deployments:
                console.print(f"  serving {deployment.flow_name}/{deployment.name}")
            console.print(f"  deployments: {ui_url}/deployments   Ctrl-C stops everything")
            serve(*deployments, print_starting_message=False)
    finally:  # a signal during start-up ends here too, the servers stopped
        console.print("Colony stopped.")
