"""The settings a command runs on: loaded as every flow loads them, then handed to what it builds.

``command_settings`` is ``blocks.load_settings``: the ``ColonyConfig`` block when
``PREFECT_API_URL`` names a server that has it, else the ``COLONY_*`` environment. A command
that serves tools (``colony mcp``, ``colony gateway``, ``colony tools call``, ``colony agent``)
also makes the sandbox roles and HPC settings its process's defaults (``use_settings``), and
``colony gateway --workers N`` hands its worker processes the very settings it loaded
(``settings_for_workers``) instead of letting each load its own. ``settings_runtime`` builds
a runtime on the settings: their kernel, policies and MCP servers.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from colony.runtime import Runtime
    from colony.settings import ColonySettings

# colony.settings (and the gateway's FastAPI and MCP with it) is imported when a command loads
# its settings, not whenever `colony` starts.

__all__ = [
    "WORKER_SETTINGS_VARIABLE",
    "command_settings",
    "serving_settings",
    "settings_for_workers",
    "settings_from_parent",
    "settings_runtime",
]

# Set by `colony gateway --workers N` for its own worker processes only; not a setting to set by hand.
WORKER_SETTINGS_VARIABLE = "COLONY_GATEWAY_WORKER_SETTINGS"


def command_settings() -> ColonySettings:
    """Colony's settings for this command: the settings block when configured, else ``COLONY_*``."""
    from blocks import load_settings

    return load_settings()


def serving_settings() -> ColonySettings:
    """The command's settings, made this process's defaults for the tools it will create."""
    from colony.settings import use_settings

    settings = command_settings()
    use_settings(settings)
    return settings


def settings_runtime(settings: ColonySettings, **options: Any) -> Runtime:
    """A runtime on ``settings``: their kernel, policies and MCP servers (``options`` as ``Runtime`` takes them)."""
    from colony.runtime import Catalog, KernelProvider, Runtime

    return Runtime(
        Catalog(upstream=settings.upstream_source()),
        kernels=KernelProvider(settings=settings.kernel),
        policies=settings.policy,
        **options,
    )


def settings_for_workers(settings: ColonySettings) -> None:
    """Hand ``settings`` (secrets included) to the worker processes this process is about to start."""
    os.environ[WORKER_SETTINGS_VARIABLE] = json.dumps(settings.revealed())


def settings_from_parent() -> ColonySettings:
    """In a worker process: the settings its parent handed over, made this process's defaults."""
    from colony.errors import SettingsError
    from colony.settings import ColonySettings, use_settings

    handed = os.environ.get(WORKER_SETTINGS_VARIABLE)
    if not handed:
        raise SettingsError(
            f"{WORKER_SETTINGS_VARIABLE} is not set: gateway workers are started by `colony gateway --workers N`, "
            "which hands them its settings"
        )
    settings = ColonySettings.model_validate_json(handed)
    use_settings(settings)
    return settings
