"""The Python client for Colony's tools (seed 004): ``from colony.client import UnifiedToolClient``."""

from colony.surfaces.client import UnifiedToolClient

__all__ = ["UnifiedToolClient"]
