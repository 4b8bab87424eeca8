"""Who a request may say it is for: Host, Origin and a POST's Content-Type, checked on every route.

A page on another site can reach an open gateway on loopback, by a cross-site
request or by rebinding its own DNS name to 127.0.0.1; either way its request
names that site in Host or Origin. So every route, /mcp included, answers only
a request whose Host is one of this gateway's own names on the port it serves
(or one the operator allows), whose Origin, when sent, is one of this gateway's
own origins or one the operator allows, compared exactly (scheme, host and
port), and which, when a POST, carries JSON, which a page cannot send to
another site without the browser first asking a CORS preflight this gateway
never grants.

The gateway's own names are the loopback names, the address it binds (unless a
wildcard), and the local address the connection arrived on; its port is the
one the connection arrived on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from colony.surfaces.gateway.replies import refusal_body, send_json

__all__ = ["LOOPBACK_NAMES", "OriginPolicy", "TransportGuardMiddleware", "normalize_origin"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_DEFAULT_PORT = {"http": 80, "https": 443}
_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def normalize_origin(origin: str) -> str | None:
    """``origin`` as ``scheme://host[:port]`` (lowercase, default port dropped), or None when it is not one."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORT or not host or parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" if port in (None, _DEFAULT_PORT[scheme]) else f"{scheme}://{host}:{port}"


class GatewayAddress(Protocol):
    """What the policy reads from GatewaySettings (named structurally: settings import this module)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def allowed_hosts(self) -> list[str]: ...
    @property
    def allowed_origins(self) -> list[str]: ...
    @property
    def jwt_audience(self) -> str | None: ...


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


class OriginPolicy:
    """The one allow-list of Host and Origin values, for every route of one gateway."""

    def __init__(
        self, *, bind_host: str, port: int, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()
    ) -> None:
        bound = _bracketed(bind_host.strip().lower())
        self._names = LOOPBACK_NAMES + (() if bound in _WILDCARDS or bound in LOOPBACK_NAMES else (bound,))
        self._port = port
        self._extra_hosts = frozenset(host.lower() for host in allowed_hosts)
        self._extra_origins = frozenset(filter(None, (normalize_origin(origin) for origin in allowed_origins)))
        self._own: dict[tuple[str, Any], tuple[frozenset[str], frozenset[str]]] = {}

    @classmethod
    def for_gateway(cls, settings: GatewayAddress) -> OriginPolicy:
        """The policy of a gateway with these GatewaySettings.

        A JWT audience names this gateway's public URL, so its host and origin are the gateway's own too.
        """
        hosts, origins = list(settings.allowed_hosts), list(settings.allowed_origins)
        if settings.jwt_audience:
            public = urlsplit(settings.jwt_audience)
            hosts.append(public.netloc.rpartition("@")[2])
            origins.append(f"{public.scheme}://{public.netloc.rpartition('@')[2]}")
        return cls(bind_host=settings.host, port=settings.port, allowed_hosts=hosts, allowed_origins=origins)

    def own(self, scheme: str, server: tuple[str, int | None] | None = None) -> tuple[frozenset[str], frozenset[str]]:
        """This gateway's own Host values and origins, for a connection on local address ``server``."""
        key = (scheme, tuple(server) if server else None)
        cached = self._own.get(key)
        if cached is not None:
            return cached
        names = list(self._names)
        port = self._port
        if server:
            if server[0] and _bracketed(server[0].lower()) not in names:
                names.append(_bracketed(server[0].lower()))
            port = server[1] or port
        hosts = {f"{name}:{port}" for name in names}
        origins = {f"{scheme}://{name}:{port}" for name in names}
        if port == _DEFAULT_PORT.get(scheme):
            hosts.update(names)
            origins = {f"{scheme}://{name}" for name in names}
        answer = (frozenset(hosts), frozenset(origins))
        if len(self._own) < 64:
            self._own[key] = answer
        return answer

    def host_allowed(
        self, host: str | None, scheme: str = "http", server: tuple[str, int | None] | None = None
    ) -> bool:
        """Whether a request with this Host header is addressed to this gateway."""
        if not host:
            return False
        host = host.strip().lower()
        return host in self._extra_hosts or host in self.own(scheme, server)[0]

    def origin_allowed(
        self, origin: str | None, scheme: str = "http", server: tuple[str, int | None] | None = None
    ) -> bool:
        """Whether a request with this Origin header (None: not sent) may be served."""
        if origin is None:
            return True
        normalized = normalize_origin(origin)
        return normalized is not None and (
            normalized in self._extra_origins or normalized in self.own(scheme, server)[1]
        )


class TransportGuardMiddleware:
    """Refuse, before anything else runs: a foreign Host (421), a foreign Origin (403), a POST without JSON (415)."""

    def __init__(self, app: ASGIApp, policy: OriginPolicy, *, jsonrpc_paths: tuple[str, ...] = ("/mcp",)) -> None:
        self.app = app
        self.policy = policy
        self.jsonrpc_paths = jsonrpc_paths
        # Raw header values (with the scheme and local address) already admitted: a client repeats them on
        # every request, so the decoding and the checks run once per combination. Bounded; only admitted
        # combinations are kept, so a caller cannot grow it with refused ones.
        self._admitted: set[tuple[Any, ...]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or await self.admits(scope, send):
            await self.app(scope, receive, send)

    async def admits(self, scope: Scope, send: Send) -> bool:
        """Whether the HTTP request may go on; when not, its refusal was sent."""
        refusal = self.refusal(scope)
        if refusal is None:
            return True
        status, message = refusal
        await send_json(send, status, refusal_body(message, jsonrpc=scope["path"] in self.jsonrpc_paths), close=True)
        return False

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and message an HTTP request is refused with, or None when it may go on."""
        raw_host = raw_origin = raw_type = None
        for name, value in scope["headers"]:
            if name == b"host":
                raw_host = value
            elif name == b"origin":
                raw_origin = value
            elif name == b"content-type":
                raw_type = value
        scheme = scope.get("scheme", "http")
        server = scope.get("server")
        key = (raw_host, raw_origin, raw_type, scope["method"] == "POST", scheme, tuple(server) if server else None)
        if key in self._admitted:
            return None
        refused = self._check(scope, raw_host, raw_origin, raw_type, scheme, server)
        if refused is None and len(self._admitted) < _ADMITTED_KEPT:
            self._admitted.add(key)
        return refused

    def _check(
        self,
        scope: Scope,
        raw_host: bytes | None,
        raw_origin: bytes | None,
        raw_type: bytes | None,
        scheme: str,
        server: tuple[str, int | None] | None,
    ) -> tuple[int, str] | None:
        host = raw_host.decode("latin-1") if raw_host is not None else None
        origin = raw_origin.decode("latin-1") if raw_origin is not None else None
        content_type = raw_type.decode("latin-1") if raw_type is not None else None
        if not self.policy.host_allowed(host, scheme, server):
            return (
                421,
                f"this gateway does not serve Host {host!r}: use its own address, or add the name to "
                "COLONY_GATEWAY_ALLOWED_HOSTS"
                if host
                else "the request has no Host header",
            )
        if not self.policy.origin_allowed(origin, scheme, server):
            return (
                403,
                f"requests from Origin {origin!r} are not allowed: only this gateway's own origin and those in "
                "COLONY_GATEWAY_ALLOWED_ORIGINS (scheme://host:port, exact) are",
            )
        if scope["method"] == "POST" and _media_type(content_type) != "application/json":
            return 415, f"POST {scope['path']} needs Content-Type: application/json, not {content_type or 'none'}"
        return None


_ADMITTED_KEPT = 256


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()
