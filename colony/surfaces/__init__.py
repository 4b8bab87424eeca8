"""Colony's surfaces: the MCP server, the HTTP gateway and the Python client, thin adapters over Runtime.call.

The client is imported on first use (PEP 562): reading the gateway's settings, as every
command does through ``colony.settings``, needs neither httpx nor the MCP types.
"""

from typing import TYPE_CHECKING

from colony._exports import imported_on_use

if TYPE_CHECKING:
    from colony.surfaces.client import ToolAnswer, UnifiedToolClient

__all__ = ["ToolAnswer", "UnifiedToolClient"]

__getattr__ = imported_on_use(__name__, dict.fromkeys(__all__, "colony.surfaces.client"))
