"""Prefect flows: each importable from agent code and deployable from prefect.yaml.

Every flow is a plain (synchronous) Prefect flow; ``in_thread`` runs one from async
code without blocking the event loop.
"""

from flows._async import in_thread

__all__ = ["in_thread"]
