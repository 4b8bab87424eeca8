"""The kernel settings a command uses: the saved ``ColonyKernelConfig`` block when there is one, as flows do.

Against a shared Prefect server (``PREFECT_API_URL`` set, in the environment or the
profile) ``colony kernel``, ``colony approvals``, ``colony mcp`` and ``colony gateway`` load
the block named ``colony`` (``COLONY_KERNEL_BLOCK``), so they show the same kernel every flow
uses; without a server, or without the block, they read the ``COLONY_*`` environment. The
block's values are put into this process's environment, so every part of the command (and
the gateway's worker processes) builds the same kernel.
"""

from __future__ import annotations

import os

import httpx
from pydantic import SecretStr

from colony.errors import SettingsError
from colony.kernel import KernelSettings

__all__ = ["use_kernel_block"]


def use_kernel_block() -> str | None:
    """Put the kernel block's settings into ``COLONY_*`` (the block wins); the block's name, or None."""
    from prefect.settings import PREFECT_API_URL

    api_url = PREFECT_API_URL.value()
    if not api_url:
        return None
    from blocks.kernel_config import BLOCK_FIELDS, DEFAULT_BLOCK_NAME, ColonyKernelConfig

    name = os.environ.get("COLONY_KERNEL_BLOCK", DEFAULT_BLOCK_NAME)
    try:
        block = ColonyKernelConfig.load(name, _sync=True)  # type: ignore[call-arg]
    except ValueError:  # no block document of that name: the environment alone
        return None
    except (httpx.HTTPError, OSError) as error:  # the API did not answer: say where we looked
        raise SettingsError(
            f"cannot read the kernel block {name!r} from the Prefect API at {api_url} ({error}); "
            "start that server, or unset PREFECT_API_URL to use the COLONY_* environment alone"
        ) from None
    for field in BLOCK_FIELDS:
        value = getattr(block, field)
        if value is not None:
            os.environ[f"COLONY_{field.upper()}"] = _as_variable(value)
    KernelSettings.from_env()  # a bad value in the block is named now, not deep in a command
    return name


def _as_variable(value: object) -> str:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return str(getattr(value, "value", value))
