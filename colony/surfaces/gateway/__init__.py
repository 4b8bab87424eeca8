"""The HTTP gateway (seed 004): catalog, tool calls, MCP over streamable HTTP, capability tokens.

``create_app`` (FastAPI and the MCP server with it) is imported on first use (PEP 562): reading
the gateway's settings, as every command does through ``colony.settings``, needs neither.
"""

from typing import TYPE_CHECKING

from colony._exports import imported_on_use
from colony.surfaces.gateway.settings import GatewaySettings, Peer

if TYPE_CHECKING:
    from colony.surfaces.gateway.app import create_app

__all__ = ["GatewaySettings", "Peer", "create_app"]

__getattr__ = imported_on_use(__name__, {"create_app": "colony.surfaces.gateway.app"})
