"""Colony's surfaces: the MCP server, the HTTP gateway and the Python client, thin adapters over Runtime.call.

The client is imported on first use (PEP 562): reading the gateway's settings, as every
command does through ``colony.settings``, needs neither httpx nor the MCP types.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from colony.surfaces.client import ToolAnswer, UnifiedToolClient

__all__ = ["ToolAnswer", "UnifiedToolClient"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from colony.surfaces import client

        return getattr(client, name)
    raise AttributeError(f"module 'colony.surfaces' has no attribute {name!r}")
