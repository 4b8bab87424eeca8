"""Secrets a tool declares by kind, resolved at run time, never stored in a spec.

A kind ``openai_api_key`` resolves from the environment variable
``COLONY_SECRET_OPENAI_API_KEY``; deployments can register further resolvers
(Prefect Secret blocks) with ``add_resolver``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from pydantic import SecretStr

from colony.errors import MissingSecretError
from colony.spec import SecretRequirement

__all__ = ["add_resolver", "env_var_for", "missing_secrets", "resolve_secret"]

Resolver = Callable[[str], str | None]
_resolvers: list[Resolver] = []


def env_var_for(kind: str) -> str:
    """The environment variable a secret of this kind is read from."""
    return f"COLONY_SECRET_{kind.upper()}"


def add_resolver(resolver: Resolver) -> None:
    """Consult ``resolver`` (after the environment) when resolving a secret."""
    if resolver not in _resolvers:
        _resolvers.append(resolver)


def _lookup(kind: str) -> str | None:
    value = os.environ.get(env_var_for(kind))
    if value:
        return value
    for resolver in _resolvers:
        value = resolver(kind)
        if value:
            return value
    return None


def resolve_secret(requirement: SecretRequirement) -> SecretStr:
    """The secret's value, or MissingSecretError naming its kind and where to set it."""
    value = _lookup(requirement.name)
    if value is None:
        raise MissingSecretError(
            f"secret {requirement.name!r} ({requirement.purpose}) is not configured: "
            f"set {env_var_for(requirement.name)} or a Prefect Secret block named "
            f"{requirement.name.replace('_', '-')!r}"
        )
    return SecretStr(value)


def missing_secrets(requirements: Iterable[SecretRequirement]) -> list[str]:
    """Kinds among ``requirements`` that resolve to nothing."""
    return [requirement.name for requirement in requirements if _lookup(requirement.name) is None]
