"""The gateway's OAuth protected-resource metadata (RFC 9728), for JWT authentication.

The ``resource`` it names is the audience the gateway accepts, in one canonical form
(no trailing ``/``; a token whose ``aud`` has one is accepted too). Authorization
servers are optional, as RFC 9728 has them: without any, the key is left out.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mcp.server.auth.routes import cors_middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from colony.surfaces.auth import canonical_resource

__all__ = ["SCOPES", "metadata_url", "resource_routes"]

SCOPES = ["tool:*", "kernel:read", "kernel:propose", "kernel:record", "kernel:approve", "colony:operator"]


def metadata_url(audience: str) -> str:
    """Where the metadata of ``audience`` is served (RFC 9728 §3.1: the well-known path before the resource's)."""
    parts = urlsplit(canonical_resource(audience))
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"


def resource_routes(audience: str, authorization_servers: list[str]) -> list[Route]:
    """The metadata route for ``audience``."""
    metadata: dict[str, object] = {
        "resource": canonical_resource(audience),
        "scopes_supported": SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_name": "Colony gateway",
    }
    if authorization_servers:
        metadata["authorization_servers"] = list(authorization_servers)

    async def serve(_: Request) -> Response:
        return JSONResponse(metadata, headers={"cache-control": "public, max-age=3600"})

    path = urlsplit(metadata_url(audience)).path
    return [Route(path, endpoint=cors_middleware(serve, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])]
