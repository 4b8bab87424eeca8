"""The process's HPC settings and client: the ones the composition root chose, else ``COLONY_HPC_*``.

A command or flow that loaded Colony's settings (from a block or the environment) hands
their ``hpc`` part to ``set_default_settings``, so every HPC tool the process creates
uses them; a library user who chose nothing gets the environment's, read once.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from colony.hpc.settings import HPCSettings

if TYPE_CHECKING:
    from colony.hpc.client import HPCClient

__all__ = ["default_client", "default_settings", "set_default_settings"]

_chosen: HPCSettings | None = None


def set_default_settings(settings: HPCSettings | None) -> None:
    """Make ``settings`` the process's HPC settings (None: back to ``COLONY_HPC_*``)."""
    global _chosen
    _chosen = settings
    default_settings.cache_clear()
    default_client.cache_clear()


@functools.cache
def default_settings() -> HPCSettings:
    """The process's HPC settings: the chosen ones, else read once from ``COLONY_HPC_*``."""
    return _chosen if _chosen is not None else HPCSettings.from_env()


@functools.cache
def default_client() -> HPCClient:
    """The process's HPC client, built once from the configured endpoint."""
    from colony.hpc.client import HPCClient, HPCClientConfig  # httpx: only where a job is sent

    settings = default_settings()
    return HPCClient(
        HPCClientConfig(
            endpoint=settings.endpoint, token=settings.token, timeout_seconds=settings.request_timeout_seconds
        )
    )
