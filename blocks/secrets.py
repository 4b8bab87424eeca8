"""Secrets a tool declares by kind, resolved from Prefect Secret blocks.

A kind ``openai_api_key`` is looked up as the Secret block ``openai-api-key``, after the
environment variable ``COLONY_SECRET_OPENAI_API_KEY`` (see ``colony.secrets``).
"""

from __future__ import annotations

from typing import cast

from colony.secrets import add_resolver

__all__ = ["install_secret_resolver", "secret_block_name", "secret_from_block"]


def secret_block_name(kind: str) -> str:
    """The Secret block a kind is read from: snake_case becomes kebab-case."""
    return kind.replace("_", "-")


def secret_from_block(kind: str) -> str | None:
    """The Secret block's value for ``kind``, or None when no such block exists."""
    from prefect.blocks.system import Secret

    try:
        # _sync=True: Prefect's async_dispatch takes it (stay sync inside an event loop); its typing omits it.
        secret = cast(Secret, Secret.load(secret_block_name(kind), _sync=True))  # type: ignore[call-arg]
    except ValueError:  # Prefect's "block document not found"
        return None
    value = secret.get()
    return value if isinstance(value, str) else None


def install_secret_resolver() -> None:
    """Let ``colony.secrets`` consult Prefect Secret blocks (idempotent)."""
    add_resolver(secret_from_block)
