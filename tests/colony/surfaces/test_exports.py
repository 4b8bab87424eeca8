"""The surfaces' public names, pinned."""

from __future__ import annotations

import colony.client
import colony.surfaces
import colony.surfaces.gateway


def test_public_names() -> None:
    assert colony.surfaces.__all__ == ["ToolAnswer", "UnifiedToolClient"]
    assert colony.surfaces.gateway.__all__ == ["GatewaySettings", "Peer", "create_app"]
    assert colony.client.__all__ == ["UnifiedToolClient"]
    assert colony.client.UnifiedToolClient is colony.surfaces.UnifiedToolClient
