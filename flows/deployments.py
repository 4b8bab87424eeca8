"""Colony's deployments, as ``colony up`` serves them: read from prefect.yaml, the one place they are defined.

``prefect deploy --all`` (and so ``colony deploy``) reads prefect.yaml for a work pool;
``colony up`` serves the same entries in its own process, so the two can never disagree:
each entry's name, description, tags, parameters and schedules come from the file, and its
flow from its entrypoint. Every flow run gets ``FLOW_RUN_ENV``: a console handler that
survives the death of its worker's pipes (prefect.yaml's work pool sets the same). Each
Colony flow beats on its own (``flows._heartbeat``), so a run whose process died is marked
Crashed (``colony.cli.zombies``).
"""

from __future__ import annotations

import importlib
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import yaml
from prefect import Flow
from prefect.deployments.runner import RunnerDeployment

from flows._heartbeat import HEARTBEAT_SECONDS

__all__ = ["FLOW_RUN_ENV", "HEARTBEAT_SECONDS", "PREFECT_YAML", "deployments", "entries"]

PREFECT_YAML = Path(__file__).resolve().parents[1] / "prefect.yaml"
FLOW_RUN_ENV = {"PREFECT_LOGGING_HANDLERS_CONSOLE_CLASS": "flows._console.DetachableConsoleHandler"}


def entries(path: Path = PREFECT_YAML) -> list[dict[str, Any]]:
    """The ``deployments`` of prefect.yaml, as written."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    return cast("list[dict[str, Any]]", document["deployments"])


def deployments(tick_interval_seconds: float | None = None, path: Path = PREFECT_YAML) -> list[RunnerDeployment]:
    """Every deployment prefect.yaml declares, ready to serve; ``tick_interval_seconds`` overrides the tick's."""
    served = []
    for entry in entries(path):
        options: dict[str, Any] = {
            "name": entry["name"],
            "description": entry.get("description"),
            "tags": entry.get("tags") or [],
            "parameters": entry.get("parameters") or {},
        }
        schedules = entry.get("schedules") or []
        if entry["name"] == "colony-tick" and tick_interval_seconds is not None:
            schedules = [{"interval": tick_interval_seconds}]
        for schedule in schedules:
            if "interval" in schedule:
                options["interval"] = timedelta(seconds=float(schedule["interval"]))
            elif "cron" in schedule:
                options["cron"] = schedule["cron"]
        served.append(cast("RunnerDeployment", _flow(entry["entrypoint"]).to_deployment(**options)))
    return served


def _flow(entrypoint: str) -> Flow[..., Any]:
    """The flow an entrypoint (``flows/tool_call.py:tool_call``) names, imported as a module of this package."""
    file, _, name = entrypoint.partition(":")
    module = importlib.import_module(file.removesuffix(".py").replace("/", "."))
    return cast("Flow[..., Any]", getattr(module, name))
