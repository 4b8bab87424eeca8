"""The HTTP gateway (seed 004): catalog, tool calls, MCP over streamable HTTP, capability tokens."""

from colony.surfaces.gateway.app import create_app
from colony.surfaces.gateway.settings import GatewaySettings, Peer

__all__ = ["GatewaySettings", "Peer", "create_app"]
