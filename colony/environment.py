"""Settings read from ``COLONY_*`` when built, and from their data alone when that data is a block's.

A pydantic-settings model reads the environment whenever it is validated, also as a field of
another model: validating a block's document would let this machine's variables fill what the
document leaves out and merge into its mappings (``COLONY_HPC_JOB_DEFINITIONS`` adding tools to
the block's). ``ColonySettings`` validates its parts inside ``data_alone()``, so a block's
settings are the block's; ``KernelSettings()`` and ``HPCSettings()`` still read the environment.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

__all__ = ["EnvironmentSettings", "data_alone"]

_READ_ENVIRONMENT: ContextVar[bool] = ContextVar("colony_read_environment", default=True)


class EnvironmentSettings(BaseSettings):
    """A settings model whose variables are read unless it is validated inside ``data_alone()``."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The given values alone inside ``data_alone()``; else pydantic-settings' usual sources."""
        if not _READ_ENVIRONMENT.get():
            return (init_settings,)
        return (init_settings, env_settings, dotenv_settings, file_secret_settings)


@contextmanager
def data_alone() -> Iterator[None]:
    """Within this block (this thread or task), settings models take the data they are given and nothing else."""
    token = _READ_ENVIRONMENT.set(False)
    try:
        yield
    finally:
        _READ_ENVIRONMENT.reset(token)
