"""The process's HPC settings and client, each built once from ``COLONY_HPC_*``."""

from __future__ import annotations

import functools

from colony.hpc.client import HPCClient, HPCClientConfig
from colony.hpc.settings import HPCSettings

__all__ = ["default_client", "default_settings"]


@functools.cache
def default_settings() -> HPCSettings:
    """The process's HPC settings, read once from ``COLONY_HPC_*``."""
    return HPCSettings()


@functools.cache
def default_client() -> HPCClient:
    """The process's HPC client, built once from the configured endpoint."""
    settings = default_settings()
    return HPCClient(
        HPCClientConfig(
            endpoint=settings.endpoint, token=settings.token, timeout_seconds=settings.request_timeout_seconds
        )
    )
