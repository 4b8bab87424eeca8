"""The one way a command or a flow gets Colony's settings: the saved block when configured, else the environment.

With ``PREFECT_API_URL`` set (in the environment or the Prefect profile), the settings are
the ``ColonyConfig`` block named ``COLONY_SETTINGS_BLOCK`` (or the older
``COLONY_KERNEL_BLOCK``; default ``colony``), whole: this machine's ``COLONY_*`` variables
then count only for its paths on disk. Without that block, or without a Prefect server,
they are ``ColonySettings.from_env()``. A server that does not answer is an error naming
it, never a silent fall back to another configuration.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

import httpx
from pydantic import ValidationError

from colony.errors import SettingsError, field_errors, summarize
from colony.settings import ColonySettings

if TYPE_CHECKING:
    from blocks.colony_config import ColonyConfig

# Prefect's block machinery is imported only when there is a server to read a block from:
# a command on a machine without one reads its environment and pays nothing more.

__all__ = ["DEFAULT_BLOCK_NAME", "load_settings", "prefect_api_url", "save_settings", "settings_block_name"]

DEFAULT_BLOCK_NAME = "colony"
# The block type an earlier Colony saved for the kernel alone; ``ColonyConfig`` replaced it.
LEGACY_KERNEL_BLOCK_TYPE = "colony-kernel-config"


def settings_block_name() -> str:
    """The name of the settings block: ``COLONY_SETTINGS_BLOCK``, ``COLONY_KERNEL_BLOCK``, else ``colony``."""
    return os.environ.get("COLONY_SETTINGS_BLOCK") or os.environ.get("COLONY_KERNEL_BLOCK") or DEFAULT_BLOCK_NAME


def prefect_api_url() -> str | None:
    """The Prefect API this process is configured for (environment or profile), if any."""
    from prefect.settings import PREFECT_API_URL

    value = PREFECT_API_URL.value()
    return str(value) if value else None


def load_settings(block: str | None = None) -> ColonySettings:
    """Colony's settings: the settings block when the Prefect API has it, else ``COLONY_*``.

    ``block`` names a block that must exist (a command's ``--block``); without it the
    configured name is looked up, and its absence means the environment.
    """
    api_url = prefect_api_url()
    name = block or settings_block_name()
    if api_url is None:
        if block is not None:
            raise SettingsError(f"cannot read the settings block {block!r}: PREFECT_API_URL names no Prefect server")
        return ColonySettings.from_env()
    try:
        found = _read(name)
    except (httpx.HTTPError, OSError) as error:  # the API did not answer: say where we looked
        raise SettingsError(
            f"cannot read the settings block {name!r} from the Prefect API at {api_url} ({error}); "
            "start that server, or unset PREFECT_API_URL to use the COLONY_* environment alone"
        ) from None
    except ValidationError as error:
        raise SettingsError(
            f"the settings block {name!r} at {api_url} holds a bad value: {summarize(field_errors(error))}"
        ) from None
    if found is not None:
        return found
    if block is not None:
        raise SettingsError(f"no settings block {block!r} at {api_url}; `colony blocks save` writes one")
    return ColonySettings.from_env()


def save_settings(settings: ColonySettings, name: str | None = None) -> str:
    """Save ``settings`` (all but the paths on disk) as the settings block; its name."""
    from blocks.colony_config import ColonyConfig

    name = name or settings_block_name()
    ColonyConfig.from_settings(settings).save(name, overwrite=True)
    return name


def _read(name: str) -> ColonySettings | None:
    """The settings the block ``name`` holds, or None; an earlier Colony's kernel-only block is refused."""
    config = _load(name)
    if config is not None:
        return config.colony_settings()
    if _legacy_kernel_block_exists(name):
        raise SettingsError(
            f"the settings block {name!r} is a {LEGACY_KERNEL_BLOCK_TYPE!r} block, which Colony no longer reads: "
            f"set its values as COLONY_* variables and run `colony blocks save` to write the ColonyConfig block "
            f"that replaces it, then delete the old one (`prefect block delete {LEGACY_KERNEL_BLOCK_TYPE}/{name}`)"
        )
    return None


def _legacy_kernel_block_exists(name: str) -> bool:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_block_document_by_name(name, block_type_slug=LEGACY_KERNEL_BLOCK_TYPE, include_secrets=False)
        except ObjectNotFound:
            return False
    return True


def _load(name: str) -> ColonyConfig | None:
    from prefect.exceptions import ObjectNotFound

    from blocks.colony_config import ColonyConfig

    try:
        # _sync=True: Prefect's async_dispatch takes it (stay sync inside an event loop); its typing omits it.
        return cast(ColonyConfig, ColonyConfig.load(name, _sync=True))  # type: ignore[call-arg]
    except ValueError as error:
        if isinstance(error.__cause__, ObjectNotFound):  # no block of that type and name
            return None
        raise
    except RuntimeError as error:  # Prefect's wrapping of a document that does not validate
        if isinstance(error.__cause__, ValidationError):
            raise error.__cause__ from None
        raise
