"""``colony deploy``: everything a shared Prefect server needs to run Colony, in one idempotent step.

Against the configured ``PREFECT_API_URL``: the process work pool, the deployments of
``prefect.yaml`` (Prefect's own ``prefect deploy --all``), the zombie-run, lost-start and crash-recovery
automations, and Colony's settings block saved from this environment. Workers then only need
``prefect worker start``.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from colony.cli.failures import fail
from colony.cli.output import cli_console

__all__ = ["DEFAULT_WORKER_LIMIT", "WORK_POOL", "deploy", "worker_command"]

console = cli_console(soft_wrap=True)
WORK_POOL = "colony"  # the pool prefect.yaml's deployments name
# A worker takes at most this many runs at once, so a batch spreads over every worker
# instead of the first one to poll taking all of it.
DEFAULT_WORKER_LIMIT = 4
DEPLOY_SECONDS = 600


def worker_command(limit: int = DEFAULT_WORKER_LIMIT) -> str:
    """The command that starts one worker of Colony's pool."""
    return f"prefect worker start --pool {WORK_POOL} --limit {limit}"


def deploy(
    project: Annotated[
        Path | None,
        typer.Option(help="The Colony checkout holding prefect.yaml (default: the one Colony is installed from)."),
    ] = None,
    blocks: Annotated[
        bool, typer.Option(help="Save this environment's settings (COLONY_*) as the block commands and flows load.")
    ] = True,
    worker_limit: Annotated[
        int, typer.Option(min=1, help="The per-worker run limit the printed worker command uses.")
    ] = DEFAULT_WORKER_LIMIT,
) -> None:
    """Deploy Colony to the Prefect server PREFECT_API_URL names: work pool, deployments, automation, blocks."""
    api_url = os.environ.get("PREFECT_API_URL") or _profile_api_url()
    if not api_url:
        raise fail(
            "PREFECT_API_URL names no Prefect server: set it to the shared server's API, e.g. http://prefect:4200/api"
        )
    checkout = (project or _installed_checkout()).resolve()
    if not (checkout / "prefect.yaml").is_file():
        raise fail(f"project: no prefect.yaml in {checkout}; pass the Colony checkout with --project")
    from colony.cli.blocks import environment_settings, register_block_types, save_settings_block
    from colony.cli.zombies import ensure_automations

    settings = environment_settings() if blocks else None  # a bad variable (or servers file) stops it first
    console.print(f"Deploying Colony to {api_url}")
    console.print(f"  work pool {WORK_POOL!r}: {ensure_work_pool()}")
    names = deploy_project(checkout)
    console.print(f"  deployments: {', '.join(names)}")
    for name, done in ensure_automations().items():
        console.print(f"  automation {name!r}: {done}")
    if blocks:
        register_block_types()
        console.print(f"  settings block {save_settings_block(settings)!r}: saved from this environment's COLONY_*")
    console.print("On every machine that runs flows (same checkout path, same PREFECT_API_URL, from the venv):")
    console.print(f"  {worker_command(worker_limit)}")
    console.print(
        f"  (--limit {worker_limit}: a worker takes at most {worker_limit} runs at once, so runs spread over workers)"
    )


def ensure_work_pool() -> str:
    """Create the process work pool unless it exists (an existing one keeps its settings)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(WORK_POOL)
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=WORK_POOL, type="process"))
            return "created"
    return "exists"


def deploy_project(checkout: Path) -> list[str]:
    """Run ``prefect deploy --all`` in the checkout; the names of the deployments it defines."""
    prefect = Path(sys.executable).parent / "prefect"
    result = subprocess.run(
        [str(prefect), "--no-prompt", "deploy", "--all"],
        cwd=checkout,
        env={**os.environ, "PWD": str(checkout)},  # prefect.yaml's pull step names {{ $PWD }}
        capture_output=True,
        text=True,
        timeout=DEPLOY_SECONDS,
        check=False,
    )
    if result.returncode != 0:
        console.print(result.stdout[-4000:], result.stderr[-4000:], highlight=False)
        raise fail(f"prefect deploy --all failed with exit code {result.returncode} (output above)")
    return deployment_names(checkout)


def deployment_names(checkout: Path) -> list[str]:
    """The names of the deployments prefect.yaml defines."""
    import yaml

    definition = yaml.safe_load((checkout / "prefect.yaml").read_text())
    return [str(entry["name"]) for entry in definition["deployments"]]


def _installed_checkout() -> Path:
    """The directory the ``flows`` package is imported from (an editable install: the checkout)."""
    module = importlib.import_module("flows")
    return Path(str(module.__file__)).resolve().parents[1]


def _profile_api_url() -> str | None:
    from prefect.settings import PREFECT_API_URL

    value = PREFECT_API_URL.value()
    return str(value) if value else None
