"""What ``tools/list`` shows: every tool with its title, annotations, schemas and pin.

The eight ``colony_*`` tools and the catalog's tools are listed alike: a title,
annotations, portable schemas (see ``portable_schema``) and ``_meta`` naming the
version and the hash of the definition served (``colony/version``,
``colony/definition_sha256``), so a client can tell when a tool changed under it.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_types import Tool, ToolAnnotations

from colony.surfaces.definitions import ToolDefinition, kernel_definition
from colony.surfaces.kernel_tools import kernel_tools
from colony.surfaces.toolhost import CatalogTool

__all__ = ["VERSION_META", "catalog_listing", "kernel_listing", "mcp_tool"]

VERSION_META = "colony/version"
HASH_META = "colony/definition_sha256"


def mcp_tool(definition: ToolDefinition, version: str) -> Tool:
    """``definition`` as an MCP ``Tool``, carrying ``version`` and the definition's hash in ``_meta``."""
    return Tool(
        name=definition.name,
        title=definition.title,
        description=definition.description,
        input_schema=definition.input_schema,
        output_schema=definition.output_schema,
        annotations=ToolAnnotations(**definition.annotations),
        meta={VERSION_META: version, HASH_META: definition.sha256},
    )


def kernel_listing() -> list[Tool]:
    """The eight ``colony_*`` tools, in the seed's order, at the seed's version."""
    return [mcp_tool(kernel_definition(tool), tool.version) for tool in kernel_tools().values()]


def catalog_listing(tools: Iterable[CatalogTool]) -> list[Tool]:
    """Catalog tools, in name order, each at its spec's version."""
    ordered = sorted(tools, key=lambda tool: tool.name)
    return [mcp_tool(tool.definition, tool.capability.spec.version) for tool in ordered]
