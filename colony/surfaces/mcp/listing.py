"""What ``tools/list`` shows: every tool with its title, annotations, schemas and pin.

The eight ``colony_*`` tools and the catalog's tools are listed alike: a title,
annotations, portable schemas (see ``portable_schema``) and ``_meta`` naming the
version and the hash of the definition served (``colony/version``,
``colony/definition_sha256``), so a client can tell when a tool changed under it.
A principal is shown only the kernel operations it may run.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_types import Tool, ToolAnnotations

from colony.capability import ToolCapability
from colony.runtime import Principal
from colony.runtime.kernel_access import KERNEL_PERMISSIONS
from colony.surfaces.approval_tools import approval_tools, may_list
from colony.surfaces.definitions import ToolDefinition, kernel_definition, served_definition
from colony.surfaces.kernel_tools import kernel_tools

__all__ = ["HASH_META", "VERSION_META", "approval_listing", "catalog_listing", "kernel_listing", "mcp_tool"]

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


def kernel_listing(principal: Principal) -> list[Tool]:
    """The ``colony_*`` tools ``principal`` may run, in the seed's order, at the seed's version."""
    return [
        mcp_tool(kernel_definition(tool), tool.version)
        for tool in kernel_tools().values()
        if principal.allows(KERNEL_PERMISSIONS[tool.name])
    ]


def approval_listing(principal: Principal) -> list[Tool]:
    """The approval tools ``principal`` may run (everyone lists its own requests; deciding needs kernel:approve)."""
    return [
        mcp_tool(kernel_definition(tool), tool.version)
        for tool in approval_tools().values()
        if may_list(principal, tool.name)
    ]


def catalog_listing(classes: Iterable[type[ToolCapability]]) -> list[Tool]:
    """Catalog tools, in the order given, each at its spec's version."""
    return [mcp_tool(served_definition(cls), cls.spec.version) for cls in classes]
