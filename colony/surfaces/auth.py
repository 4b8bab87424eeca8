"""Bearer tokens and the capability tokens they grant (seed 004).

A gateway with no tokens configured is open, and may then only listen on
loopback. With tokens configured every tool call names one; a token grants
capability tokens (``tool:pii_redact`` ...; ``*`` grants all), and a call is
refused unless its token grants each of the tool's ``required_capabilities``.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from colony.errors import AuthenticationError, CapabilityDeniedError, SurfaceError
from colony.spec import ToolSpec

__all__ = ["ALL_CAPABILITIES", "OPEN", "Grants", "TokenTable", "parse_tokens", "tokens_from_env"]

ALL_CAPABILITIES = "*"


@dataclass(frozen=True)
class Grants:
    """The capability tokens one caller holds."""

    capabilities: frozenset[str]

    def allows(self, capability: str) -> bool:
        """Whether this caller holds ``capability``."""
        return ALL_CAPABILITIES in self.capabilities or capability in self.capabilities

    def require(self, spec: ToolSpec) -> None:
        """Raise CapabilityDeniedError naming each of the tool's capability tokens the caller lacks."""
        missing = [token for token in spec.required_capabilities if not self.allows(token)]
        if missing:
            raise CapabilityDeniedError(
                f"calling {spec.name} requires the capability token(s) {', '.join(missing)}, "
                "which the presented bearer token does not grant",
                missing=missing,
            )


OPEN = Grants(frozenset({ALL_CAPABILITIES}))


class TokenTable:
    """Bearer token -> granted capability tokens."""

    def __init__(self, tokens: Mapping[str, Iterable[str]] | None = None) -> None:
        self._tokens = {token: Grants(frozenset(granted)) for token, granted in (tokens or {}).items()}
        if any(not token.strip() for token in self._tokens):
            raise SurfaceError("a configured bearer token is empty")

    @property
    def configured(self) -> bool:
        """Whether any token is configured (a gateway without tokens is open)."""
        return bool(self._tokens)

    def authenticate(self, authorization: str | None) -> Grants:
        """The grants of the bearer token in an ``Authorization`` header value."""
        if not self._tokens:
            return OPEN
        if not authorization:
            raise AuthenticationError("this gateway requires a bearer token: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError("the Authorization header must be 'Bearer <token>'")
        presented = token.strip().encode()
        for known, grants in self._tokens.items():
            if hmac.compare_digest(known.encode(), presented):
                return grants
        raise AuthenticationError("the bearer token is not one this gateway knows")


def tokens_from_env() -> dict[str, list[str]]:
    """``COLONY_GATEWAY_TOKENS`` (a JSON object) or ``COLONY_GATEWAY_TOKENS_FILE`` (a path to one); else none."""
    text = os.environ.get("COLONY_GATEWAY_TOKENS", "").strip()
    if text:
        return parse_tokens(text, "COLONY_GATEWAY_TOKENS")
    path = os.environ.get("COLONY_GATEWAY_TOKENS_FILE", "").strip()
    if not path:
        return {}
    try:
        return parse_tokens(Path(path).read_text(encoding="utf-8"), path)
    except OSError as error:
        raise SurfaceError(f"{path}: cannot read the gateway's token file: {error}") from None


def parse_tokens(text: str, source: str) -> dict[str, list[str]]:
    """A token table from JSON ``{"<token>": ["tool:unit_convert", ...]}``, naming ``source`` on error."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise SurfaceError(f"{source}: tokens are not valid JSON: {error}") from None
    if not isinstance(document, dict) or not all(
        isinstance(granted, list) and all(isinstance(item, str) for item in granted) for granted in document.values()
    ):
        raise SurfaceError(f'{source}: tokens must be a JSON object {{"<token>": ["tool:<name>", ...]}}')
    return document
