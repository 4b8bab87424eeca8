"""``from edge_node.tools.pii_redact import pii_redact``, as seed 004's unit-test sample writes it.

Seed 004's tools are functions of one argument dict; Colony's are ``ToolCapability`` classes.
``pii_redact(args)`` calls the catalog's ``pii_redact`` tool through ``UnifiedToolClient``,
in this process, so the seed's sample runs as written against the real tool.
"""

from functools import cache
from typing import Any

from colony.client import UnifiedToolClient

__all__ = ["pii_redact"]


@cache
def _client() -> UnifiedToolClient:
    return UnifiedToolClient()


def pii_redact(args: dict[str, Any]) -> dict[str, Any]:
    """Redact PII from ``args["text"]``; the arguments and result are the tool's."""
    result: dict[str, Any] = _client().call_tool_local("pii_redact", args)
    return result
