"""Colony's surfaces: the MCP server, the HTTP gateway and the Python client, thin adapters over Runtime.call."""

from colony.surfaces.client import ToolAnswer, UnifiedToolClient

__all__ = ["ToolAnswer", "UnifiedToolClient"]
