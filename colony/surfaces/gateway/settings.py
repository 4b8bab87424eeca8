"""The gateway's settings, from the environment, and the rule that keeps it safe by default.

They are the ``gateway`` part of ``colony.settings.ColonySettings``, which a deployment keeps
whole in a Prefect block; so every secret here is a ``SecretStr`` (the token table as its JSON
text, since a mapping's keys would show; a peer's token), which Prefect stores encrypted and
shows obfuscated.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from colony.errors import SurfaceError
from colony.runtime.rate_limits import RateLimitSettings
from colony.surfaces.auth import (
    Authenticator,
    JwtAuthenticator,
    JwtSettings,
    OpenAccess,
    TokenFile,
    TokenGrant,
    TokenTable,
    parse_tokens,
    read_token_file,
    tokens_from_env,
)
from colony.surfaces.gateway.origins import normalize_origin

__all__ = [
    "LIST_VARIABLES",
    "SCALAR_VARIABLES",
    "STRUCTURED_VARIABLES",
    "GatewaySettings",
    "Peer",
    "is_loopback",
]


#: The ``COLONY_GATEWAY_*`` variable of each plain field (the settings reference lists them from here).
SCALAR_VARIABLES = {
    field: f"COLONY_GATEWAY_{suffix}"
    for field, suffix in {
        "host": "HOST",
        "port": "PORT",
        "node_id": "NODE_ID",
        "max_body_bytes": "MAX_BODY_BYTES",
        "max_argument_bytes": "MAX_ARGUMENT_BYTES",
        "call_timeout_seconds": "CALL_TIMEOUT",
        "peer_timeout_seconds": "PEER_TIMEOUT",
        "peer_catalog_max_bytes": "PEER_CATALOG_MAX_BYTES",
        "jwks_url": "JWKS_URL",
        "jwks_file": "JWKS_FILE",
        "jwt_audience": "JWT_AUDIENCE",
        "jwt_issuer": "JWT_ISSUER",
        "header_timeout_seconds": "HEADER_TIMEOUT",
        "max_header_bytes": "MAX_HEADER_BYTES",
        "body_timeout_seconds": "BODY_TIMEOUT",
        "max_connections": "MAX_CONNECTIONS",
        "max_connections_per_client": "MAX_CONNECTIONS_PER_CLIENT",
        "max_waits_per_principal": "MAX_WAITS_PER_PRINCIPAL",
    }.items()
}
#: The variable of each list field: comma-separated values.
LIST_VARIABLES = {
    "allowed_hosts": "COLONY_GATEWAY_ALLOWED_HOSTS",
    "allowed_origins": "COLONY_GATEWAY_ALLOWED_ORIGINS",
    "authorization_servers": "COLONY_GATEWAY_AUTHORIZATION_SERVERS",
    "trusted_proxies": "COLONY_GATEWAY_TRUSTED_PROXIES",
}
#: The variable of each structured field (JSON, or a path for the token file).
STRUCTURED_VARIABLES = {
    "tokens": "COLONY_GATEWAY_TOKENS",
    "tokens_file": "COLONY_GATEWAY_TOKENS_FILE",
    "peers": "COLONY_GATEWAY_PEERS",
    "rate_limits": "COLONY_GATEWAY_RATE_LIMITS",
}


class Peer(BaseModel):
    """Another Colony gateway this one may route calls to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(pattern=r"^https?://", description="Base URL of the peer gateway, e.g. http://10.0.0.2:8787.")
    token: SecretStr | None = Field(default=None, description="Bearer token to present to the peer, if it needs one.")

    @field_validator("url")
    @classmethod
    def _no_trailing_slash(cls, url: str) -> str:
        return url.rstrip("/")


class GatewaySettings(BaseModel):
    """Where the gateway listens, who may call it, where it routes and what it caps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = Field(default="127.0.0.1", description="Interface to bind; anything but loopback needs tokens.")
    port: int = Field(default=8787, ge=0, le=65535, description="TCP port to bind.")
    tokens: SecretStr = Field(
        default=SecretStr(""),
        description='Static bearer tokens, JSON: {"<token>": {"agent": "engineer-1", "capabilities": ["tool:*"], '
        '"operator": false}}; empty for none. A mapping of token to grant is accepted too.',
    )
    tokens_file: str | None = Field(
        default=None,
        description="A file holding the token table, re-read when it changes (a token removed stops working at "
        "once); a path on each machine, never kept in a block.",
    )
    jwks_url: str | None = Field(default=None, description="JWKS URL for OAuth 2.1 bearer JWTs (production auth).")
    jwks_file: str | None = Field(
        default=None,
        description="A JWKS document on disk, instead of a URL; a path on each machine, never kept in a block.",
    )
    jwt_audience: str | None = Field(
        default=None, description="This server's resource URL: a JWT's 'aud' must name it (RFC 8707)."
    )
    jwt_issuer: str | None = Field(default=None, description="The issuer a JWT's 'iss' must name, when set.")
    authorization_servers: list[str] = Field(
        default_factory=list, description="Authorization servers advertised in the protected-resource metadata."
    )
    peers: list[Peer] = Field(default_factory=list, description="Peer gateways for remote and auto routing.")
    node_id: str = Field(default="", description="This node's name in the catalog; default host:port.")
    max_body_bytes: int = Field(default=1024 * 1024, gt=0, description="Largest request body accepted.")
    max_argument_bytes: int = Field(default=256 * 1024, gt=0, description="Largest tool_args accepted (JSON).")
    call_timeout_seconds: float = Field(default=30.0, gt=0, description="Per-call timeout of a local tool.")
    peer_timeout_seconds: float = Field(default=10.0, gt=0, description="Timeout of one request to a peer.")
    peer_catalog_max_bytes: int = Field(
        default=4 * 1024 * 1024, gt=0, description="Largest catalog a peer may answer for the mesh catalog."
    )
    allowed_hosts: list[str] = Field(
        default_factory=list, description="Host values accepted beyond this gateway's own (host:port, exact)."
    )
    allowed_origins: list[str] = Field(
        default_factory=list, description="Origins accepted beyond this gateway's own (scheme://host[:port], exact)."
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses of reverse proxies whose X-Forwarded-For and -Proto are believed (none by default: "
        "a caller cannot name another client address for the audit log).",
    )
    header_timeout_seconds: int = Field(
        default=5, ge=1, le=300, description="Time a connection has to send each request head; also the idle limit."
    )
    max_header_bytes: int = Field(default=16 * 1024, ge=1024, description="Largest request head (line and headers).")
    body_timeout_seconds: float = Field(default=15.0, gt=0, description="Time a request has to send its whole body.")
    max_connections: int = Field(
        default=1000, ge=1, description="Connections and requests held at once; beyond it a request gets 503."
    )
    max_connections_per_client: int | None = Field(
        default=None,
        ge=1,
        description="Connections one client address may hold at once, counted before authentication; a request "
        "on one more is answered 429 with Retry-After and does not count against max_connections. Default: a "
        "tenth of max_connections (100 of 1,000). Connections from trusted_proxies are not counted.",
    )
    max_waits_per_principal: int = Field(
        default=4,
        ge=1,
        description="Approval long polls (GET /v1/approvals/{id}?wait=S) one principal may hold at once, from "
        "any address; one more is answered 429 with Retry-After.",
    )
    rate_limits: RateLimitSettings = Field(
        default_factory=RateLimitSettings, description="Per-principal call rates and concurrency, per tool."
    )

    @field_validator("tokens", mode="before")
    @classmethod
    def _table_as_text(cls, tokens: Any) -> Any:
        if isinstance(tokens, Mapping):
            grants = {
                token: grant.model_dump() if isinstance(grant, BaseModel) else grant for token, grant in tokens.items()
            }
            return json.dumps(grants)
        return tokens

    @field_validator("tokens")
    @classmethod
    def _table_parses(cls, tokens: SecretStr) -> SecretStr:
        if tokens.get_secret_value().strip():
            try:
                parse_tokens(tokens.get_secret_value(), "tokens")
            except SurfaceError as error:
                raise ValueError(str(error)) from None
        return tokens

    @field_validator("authorization_servers")
    @classmethod
    def _servers_are_urls(cls, servers: list[str]) -> list[str]:
        for server in servers:
            if not server.startswith(("https://", "http://")):
                raise ValueError(f"{server!r} is not an authorization server URL: expected https://issuer.example")
        return servers

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_lowercase(cls, hosts: list[str]) -> list[str]:
        return [host.strip().lower() for host in hosts if host.strip()]

    @field_validator("allowed_origins")
    @classmethod
    def _origins_exact(cls, origins: list[str]) -> list[str]:
        exact = []
        for origin in origins:
            normalized = normalize_origin(origin)
            if normalized is None:
                raise ValueError(f"{origin!r} is not an origin: expected scheme://host[:port], e.g. https://ui.example")
            exact.append(normalized)
        return exact

    @property
    def node(self) -> str:
        """The name this node reports."""
        return self.node_id or f"{self.host}:{self.port}"

    @property
    def client_share(self) -> int:
        """The connections one client address may hold: its setting, else a tenth of the cap (at least one)."""
        return self.max_connections_per_client or max(1, self.max_connections // 10)

    def token_table(self) -> dict[str, TokenGrant]:
        """The static bearer tokens, each with the principal it stands for (empty: none); a file's as it is now."""
        if self.tokens_file:
            return read_token_file(Path(self.tokens_file))
        text = self.tokens.get_secret_value()
        return parse_tokens(text, "gateway tokens") if text.strip() else {}

    @property
    def uses_jwt(self) -> bool:
        """Whether callers authenticate with OAuth bearer JWTs."""
        return bool(self.jwks_url or self.jwks_file)

    def authenticator(self) -> Authenticator:
        """Who may call: JWTs against a JWKS, a static token table, or (neither) open to this machine."""
        if self.tokens_file and self.tokens.get_secret_value().strip():
            raise SurfaceError("configure either static tokens or a token file, not both")
        tokens = self.token_table()
        if self.uses_jwt:
            if tokens:
                raise SurfaceError("configure either JWT authentication or static tokens, not both")
            if not self.jwt_audience:
                raise SurfaceError("JWT authentication needs COLONY_GATEWAY_JWT_AUDIENCE (this server's URL)")
            jwks = None
            if self.jwks_file:
                try:
                    jwks = json.loads(Path(self.jwks_file).read_text(encoding="utf-8"))
                except (OSError, ValueError) as error:
                    raise SurfaceError(f"{self.jwks_file}: cannot read the JWKS: {error}") from None
            return JwtAuthenticator(
                JwtSettings(audience=self.jwt_audience, jwks_url=self.jwks_url, jwks=jwks, issuer=self.jwt_issuer)
            )
        if self.tokens_file:
            return TokenFile(self.tokens_file)
        if tokens:
            return TokenTable(tokens)
        return OpenAccess()

    def check_safe(self) -> None:
        """Refuse to listen beyond loopback without tokens: an open gateway is for this machine only."""
        if not is_loopback(self.host) and not self.token_table() and not self.uses_jwt:
            raise SurfaceError(
                f"refusing to bind {self.host}: a gateway reachable from other machines needs bearer tokens "
                "(set COLONY_GATEWAY_TOKENS or COLONY_GATEWAY_TOKENS_FILE)"
            )

    @classmethod
    def from_env(cls, **overrides: Any) -> GatewaySettings:
        """Settings from ``COLONY_GATEWAY_*`` variables, then ``overrides`` (the CLI's options)."""
        env = os.environ
        values: dict[str, Any] = {}
        for field, variable in SCALAR_VARIABLES.items():
            if env.get(variable):
                values[field] = env[variable]
        for field, variable in LIST_VARIABLES.items():
            if env.get(variable):
                values[field] = [item.strip() for item in env[variable].split(",") if item.strip()]
        if env.get(STRUCTURED_VARIABLES["rate_limits"]):
            values["rate_limits"] = _parse_rate_limits(env[STRUCTURED_VARIABLES["rate_limits"]])
        if env.get(STRUCTURED_VARIABLES["peers"]):
            values["peers"] = _parse_peers(env[STRUCTURED_VARIABLES["peers"]])
        tokens = tokens_from_env()
        if tokens:
            values["tokens"] = tokens
        elif env.get(STRUCTURED_VARIABLES["tokens_file"], "").strip():
            values["tokens_file"] = env[STRUCTURED_VARIABLES["tokens_file"]].strip()
            read_token_file(Path(values["tokens_file"]))  # a file that cannot serve is refused at start
        return cls._validated(values, overrides)

    def with_options(self, **options: Any) -> GatewaySettings:
        """These settings with the command's options (those not None) in their place, validated."""
        return self._validated(self.model_dump(), options)

    @classmethod
    def _validated(cls, values: dict[str, Any], overrides: dict[str, Any]) -> GatewaySettings:
        values = values | {key: value for key, value in overrides.items() if value is not None}
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            detail = error.errors(include_url=False)[0]
            where = ".".join(str(part) for part in detail["loc"])
            raise SurfaceError(f"gateway setting {where}: {detail['msg']}") from None


def _plain(grant: Any) -> Any:
    return grant.model_dump() if isinstance(grant, BaseModel) else grant


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _parse_peers(text: str) -> list[dict[str, Any]]:
    """Peers as comma-separated URLs, or a JSON list of ``{"url": ..., "token": ...}``."""
    if text.lstrip().startswith("["):
        try:
            peers = json.loads(text)
        except json.JSONDecodeError as error:
            raise SurfaceError(f"COLONY_GATEWAY_PEERS: not valid JSON: {error}") from None
        if not isinstance(peers, list):
            raise SurfaceError("COLONY_GATEWAY_PEERS: expected a JSON list of peers")
        return peers
    return [{"url": url.strip()} for url in text.split(",") if url.strip()]


def _parse_rate_limits(text: str) -> dict[str, Any]:
    """``COLONY_GATEWAY_RATE_LIMITS``: a JSON object (see RateLimitSettings)."""
    try:
        limits = json.loads(text)
    except json.JSONDecodeError as error:
        raise SurfaceError(f"COLONY_GATEWAY_RATE_LIMITS: not valid JSON: {error}") from None
    if not isinstance(limits, dict):
        raise SurfaceError('COLONY_GATEWAY_RATE_LIMITS: expected a JSON object {"default": {...}, "tools": {...}}')
    return limits
