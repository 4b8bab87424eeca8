"""Authentication: a credential becomes a Principal before anything else runs.

Two token sources sit behind one interface (``Authenticator``):

- ``TokenTable``: static bearer tokens, each bound to one principal; ``TokenFile``
  keeps one in step with a file (a token removed from it stops working at once)
  (``{"<token>": {"agent": "engineer-1", "capabilities": ["tool:*"], "operator": false}}``);
  the older list form (``{"<token>": ["tool:unit_convert"]}``) still loads, as an
  anonymous non-operator principal, with a warning.
- ``JwtAuthenticator``: OAuth 2.1 bearer JWTs verified against a JWKS, as the MCP
  authorization spec has HTTP servers do: asymmetric algorithms only, the audience
  bound to this server (RFC 8707), ``sub`` names the agent, scopes grant capability
  tokens and ``colony:operator`` the operator role. Keys come from the JWKS off the
  event loop (``prepare``): one fetch at a time, with a deadline, at most once per
  ``refetch_seconds`` for keys it does not know.

With neither configured the gateway is open, may only listen on loopback, and every
caller is this machine's local operator principal.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colony.errors import AuthenticationError, SurfaceError
from colony.runtime.principal import ANONYMOUS_AGENT, LOCAL_OPERATOR, OPERATOR_SCOPE, Principal

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "Authenticator",
    "JwtAuthenticator",
    "JwtSettings",
    "OpenAccess",
    "TokenFile",
    "TokenGrant",
    "TokenTable",
    "bearer_token",
    "canonical_resource",
    "parse_tokens",
    "principal_of",
    "read_token_file",
    "tokens_from_env",
]

logger = logging.getLogger("colony.gateway")

ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class TokenGrant(BaseModel):
    """The principal one static bearer token stands for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(min_length=1, max_length=256, description="The agent id the token authenticates as.")
    capabilities: list[str] = Field(default_factory=list, description="Capability tokens granted ('*' grants all).")
    operator: bool = Field(default=False, description="Whether the token's holder may act for other agents.")
    groups: list[str] = Field(default_factory=list, description="Groups the holder is in (policies read them).")

    def principal(self) -> Principal:
        """The principal this grant describes."""
        return Principal.of(self.agent, self.capabilities, operator=self.operator, groups=self.groups)


class Authenticator(Protocol):
    """Turns an ``Authorization`` header value into a Principal, or raises AuthenticationError."""

    @property
    def open(self) -> bool:
        """Whether calls need no credential at all (an open, loopback-only gateway)."""
        ...

    async def prepare(self, authorization: str | None) -> None:
        """Fetch what ``authenticate`` needs for this credential (a JWT's key), without blocking the event loop."""
        ...

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal the credential stands for (no I/O beyond a file's stat: ``prepare`` did the rest)."""
        ...


async def principal_of(authenticator: Authenticator, authorization: str | None) -> Principal:
    """The principal an ``Authorization`` header stands for, or AuthenticationError."""
    await authenticator.prepare(authorization)
    return authenticator.authenticate(authorization)


class OpenAccess:
    """No credentials configured: every caller is the local operator (loopback only)."""

    open = True

    async def prepare(self, authorization: str | None) -> None:
        """Nothing to fetch."""

    def authenticate(self, authorization: str | None) -> Principal:
        """The local operator principal."""
        return LOCAL_OPERATOR


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header value, or AuthenticationError."""
    if not authorization:
        raise AuthenticationError("this gateway requires a bearer token: send 'Authorization: Bearer <token>'")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationError("the Authorization header must be 'Bearer <token>'")
    return token.strip()


class TokenTable:
    """Static bearer tokens, each bound to one principal."""

    open = False

    def __init__(self, tokens: Mapping[str, TokenGrant | Mapping[str, Any] | Iterable[str]]) -> None:
        self._tokens: list[tuple[bytes, Principal]] = []
        for token, grant in tokens.items():
            if not token.strip():
                raise SurfaceError("a configured bearer token is empty")
            self._tokens.append((token.encode(), _grant(grant).principal()))
        if not self._tokens:
            raise SurfaceError("a token table needs at least one token")

    async def prepare(self, authorization: str | None) -> None:
        """Nothing to fetch."""

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal bound to the presented token (compared in constant time)."""
        presented = bearer_token(authorization).encode()
        found = None
        for known, principal in self._tokens:
            if hmac.compare_digest(known, presented):
                found = principal
        if found is None:
            raise AuthenticationError("the bearer token is not one this gateway knows")
        return found


class TokenFile:
    """A token table kept in step with its file: a token added or removed counts from the next call.

    Each call stats the file (one system call); it is re-read only when its modification
    time, size or inode changed. A file that becomes unreadable or invalid accepts no token
    until it is mended, rather than keeping tokens someone meant to remove.
    """

    open = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp = self._stat()
        self._table: TokenTable | None = TokenTable(read_token_file(self.path))
        self._problem = ""

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            status = self.path.stat()
        except OSError:
            return None
        return (status.st_mtime_ns, status.st_size, status.st_ino)

    def _current(self) -> TokenTable:
        stamp = self._stat()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._table, self._problem = TokenTable(read_token_file(self.path)), ""
            except SurfaceError as error:
                self._table, self._problem = None, str(error)
                logger.error("gateway token file: %s; no token is accepted until it is mended", error)
            else:
                logger.info("gateway token file %s re-read", self.path)
        if self._table is None:
            raise AuthenticationError(f"the gateway's token file is unreadable or invalid: {self._problem}")
        return self._table

    async def prepare(self, authorization: str | None) -> None:
        """Nothing to fetch (the file is stat-ed in ``authenticate``)."""

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal the file binds to the presented token now."""
        return self._current().authenticate(authorization)


def read_token_file(path: Path) -> dict[str, TokenGrant]:
    """The token table in the file at ``path``, or SurfaceError naming the file and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SurfaceError(f"{path}: cannot read the gateway's token file: {error}") from None
    return parse_tokens(text, str(path))


def canonical_resource(url: str) -> str:
    """This server's resource URL in the one form it is served and compared in: no trailing ``/``."""
    return url.strip().rstrip("/")


def _grant(value: TokenGrant | Mapping[str, Any] | Iterable[str]) -> TokenGrant:
    if isinstance(value, TokenGrant):
        return value
    if isinstance(value, Mapping):
        return TokenGrant.model_validate(dict(value))
    return TokenGrant(agent=ANONYMOUS_AGENT, capabilities=list(value))


@dataclass(frozen=True)
class JwtSettings:
    """Where the JWKS is and what a token must say to be accepted."""

    audience: str
    jwks_url: str | None = None
    jwks: Mapping[str, Any] | None = None
    issuer: str | None = None
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    leeway_seconds: float = 30.0
    fetch_timeout_seconds: float = 5.0
    refetch_seconds: float = 60.0


class JwtAuthenticator:
    """OAuth 2.1 bearer JWTs, verified against a JWKS (PyJWT), bound to this server's audience."""

    open = False

    def __init__(self, settings: JwtSettings) -> None:
        import jwt

        weak = [name for name in settings.algorithms if name not in ASYMMETRIC_ALGORITHMS]
        if weak:
            raise SurfaceError(f"JWT algorithms {weak} are not allowed: only asymmetric ones ({ASYMMETRIC_ALGORITHMS})")
        if (settings.jwks_url is None) == (settings.jwks is None):
            raise SurfaceError("JWT authentication needs exactly one of a JWKS URL or a JWKS document")
        self.settings = settings
        resource = canonical_resource(settings.audience)
        self._audiences = [resource, resource + "/"]  # RFC 8707 clients may send either form
        self._keys: list[Any] = jwt.PyJWKSet.from_dict(dict(settings.jwks)).keys if settings.jwks is not None else []
        self._fetched_at: float | None = None
        self._fetching: anyio.Lock | None = None

    def _known(self, kid: str | None) -> bool:
        return any(kid is None or key.key_id == kid for key in self._keys)

    async def prepare(self, authorization: str | None) -> None:
        """Fetch the JWKS when the token names a key not yet known: one fetch at a time, rate-limited."""
        import jwt

        if self.settings.jwks_url is None:
            return
        try:
            kid = jwt.get_unverified_header(bearer_token(authorization)).get("kid")
        except (AuthenticationError, jwt.PyJWTError):
            return  # authenticate says what is wrong with it
        if self._known(kid):
            return
        self._fetching = self._fetching or anyio.Lock()
        async with self._fetching:
            if self._known(kid):
                return  # another request fetched it meanwhile
            if self._fetched_at is not None and time.monotonic() - self._fetched_at < self.settings.refetch_seconds:
                return  # fetched lately: an unknown kid does not make this gateway hammer the issuer
            self._fetched_at = time.monotonic()
            self._keys = await self._fetch()

    async def _fetch(self) -> list[Any]:
        import jwt

        url = self.settings.jwks_url
        try:
            async with httpx.AsyncClient(timeout=self.settings.fetch_timeout_seconds) as client:
                response = await client.get(str(url))
                response.raise_for_status()
                return list(jwt.PyJWKSet.from_dict(response.json()).keys)
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as error:
            logger.warning("cannot fetch the JWKS at %s: %s", url, error)
            raise AuthenticationError(
                f"the JWKS at {url} could not be fetched to verify the bearer JWT: {error}"
            ) from None

    def _key(self, token: str) -> Any:
        import jwt

        kid = jwt.get_unverified_header(token).get("kid")
        matching = [key for key in self._keys if kid is None or key.key_id == kid]
        if not matching:
            raise jwt.InvalidTokenError(f"no key with kid {kid!r} in the JWKS")
        return matching[0].key

    def claims(self, token: str) -> dict[str, Any]:
        """The verified claims, or AuthenticationError saying why the token is refused."""
        import jwt

        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._key(token),
                algorithms=list(self.settings.algorithms),
                audience=self._audiences,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway_seconds,
                options={"require": ["exp", "sub", "aud"]},
            )
        except (jwt.PyJWTError, ValueError) as error:
            raise AuthenticationError(f"the bearer JWT is not accepted: {error}") from None
        return claims

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal a verified JWT names: ``sub`` the agent, scopes its capability tokens (keys: ``prepare``)."""
        return principal_from_claims(self.claims(bearer_token(authorization)))


def principal_from_claims(claims: Mapping[str, Any]) -> Principal:
    """``sub`` is the agent; ``scope`` (space-separated) or ``scp`` (a list) grant capability tokens; ``groups``."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject.strip():
        raise AuthenticationError("the bearer JWT has no subject ('sub') naming the agent")
    raw = claims.get("scope", claims.get("scp", ""))
    scopes = raw.split() if isinstance(raw, str) else [str(item) for item in raw or []]
    raw_groups = claims.get("groups", [])
    groups = raw_groups.split() if isinstance(raw_groups, str) else [str(item) for item in raw_groups or []]
    return Principal.of(
        subject, [s for s in scopes if s != OPERATOR_SCOPE], operator=OPERATOR_SCOPE in scopes, groups=groups
    )


def tokens_from_env() -> dict[str, TokenGrant]:
    """``COLONY_GATEWAY_TOKENS`` (JSON); else none (a token file is a setting of its own: it is followed)."""
    text = os.environ.get("COLONY_GATEWAY_TOKENS", "").strip()
    return parse_tokens(text, "COLONY_GATEWAY_TOKENS") if text else {}


def parse_tokens(text: str, source: str) -> dict[str, TokenGrant]:
    """A token table from JSON, naming ``source`` on error.

    Each value is ``{"agent": ..., "capabilities": [...], "operator": false}``; a plain list
    of capability tokens (the older form) is read as an anonymous non-operator principal.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise SurfaceError(f"{source}: tokens are not valid JSON: {error}") from None
    shape = '{"<token>": {"agent": "<agent id>", "capabilities": ["tool:<name>", ...], "operator": false}}'
    if not isinstance(document, dict):
        raise SurfaceError(f"{source}: tokens must be a JSON object {shape}")
    grants: dict[str, TokenGrant] = {}
    legacy = 0
    for token, value in document.items():
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            legacy += 1
            grants[token] = TokenGrant(agent=ANONYMOUS_AGENT, capabilities=value)
            continue
        try:
            grants[token] = TokenGrant.model_validate(value)
        except ValidationError as error:
            detail = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in detail["loc"]) or "<value>"
            raise SurfaceError(
                f"{source}: a token's grant is invalid at {where}: {detail['msg']}; expected {shape}"
            ) from None
    if legacy:
        warnings.warn(
            f"{source}: {legacy} token(s) use the list form, which binds no agent: each authenticates as the "
            f"anonymous non-operator principal; write {shape} instead",
            FutureWarning,
            stacklevel=2,
        )
    return grants
