"""Prefect Blocks for a Colony deployment: its settings (one block, the whole model) and its secrets.

``ColonyConfig`` is imported on first use (PEP 562): loading settings on a machine without a
Prefect server needs none of Prefect's block machinery.
"""

from typing import TYPE_CHECKING, Any

from blocks.loading import DEFAULT_BLOCK_NAME, load_settings, prefect_api_url, save_settings, settings_block_name
from blocks.secrets import install_secret_resolver, secret_block_name

if TYPE_CHECKING:
    from blocks.colony_config import ColonyConfig

__all__ = [
    "DEFAULT_BLOCK_NAME",
    "ColonyConfig",
    "install_secret_resolver",
    "load_settings",
    "prefect_api_url",
    "save_settings",
    "secret_block_name",
    "settings_block_name",
]


def __getattr__(name: str) -> Any:
    if name == "ColonyConfig":
        from blocks.colony_config import ColonyConfig

        return ColonyConfig
    raise AttributeError(f"module 'blocks' has no attribute {name!r}")
