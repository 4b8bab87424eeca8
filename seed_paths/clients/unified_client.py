"""``from clients.unified_client import UnifiedToolClient``, as seed 004's samples write it.

A re-export of ``colony.client.UnifiedToolClient``, so the seed's samples run as written.
"""

from colony.client import UnifiedToolClient

__all__ = ["UnifiedToolClient"]
