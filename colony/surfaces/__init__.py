"""Colony's surfaces: the MCP server, the HTTP gateway and the Python client, over one tool host."""

from colony.surfaces.client import UnifiedToolClient
from colony.surfaces.toolhost import Caller, CallResult, LocalToolHost

__all__ = ["CallResult", "Caller", "LocalToolHost", "UnifiedToolClient"]
