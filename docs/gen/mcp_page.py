"""The MCP reference: every tool ``colony mcp`` and the gateway's ``/mcp`` list, from their definitions."""

from __future__ import annotations

import json

import mkdocs_gen_files

from colony.catalog import load_registry, resolve_capability
from colony.surfaces.approval_tools import approval_tools
from colony.surfaces.definitions import ToolDefinition, kernel_definition, served_definition
from colony.surfaces.kernel_tools import kernel_tools


def tool_lines(definition: ToolDefinition) -> list[str]:
    """One tool as an MCP client lists it: title, description, annotations and both schemas."""
    lines = [f"### `{definition.name}`", "", f"**{definition.title}**", "", definition.description.strip(), ""]
    hints = ", ".join(f"`{name}`: {json.dumps(value)}" for name, value in definition.annotations.items())
    lines += [f"Annotations: {hints}.", "", f"Definition hash: `{definition.sha256}`", ""]
    lines += ["Input schema:", "", "```json", json.dumps(definition.input_schema, indent=2), "```", ""]
    if definition.output_schema is not None:
        lines += ["Output schema:", "", "```json", json.dumps(definition.output_schema, indent=2), "```", ""]
    return lines


lines = [
    "# MCP tools",
    "",
    "Generated at build time from the definitions the MCP surfaces serve (`colony mcp` over stdio and the "
    "gateway's `/mcp`), in their portable form; a principal sees only the tools its capability tokens allow.",
    "",
    "## Kernel and approval tools",
    "",
]
for tool in [*kernel_tools().values(), *approval_tools().values()]:
    lines += tool_lines(kernel_definition(tool))
lines += ["## Catalog tools", ""]
for _, entry in sorted(load_registry().items()):
    if not entry.is_stub:
        lines += tool_lines(served_definition(resolve_capability(entry)))
with mkdocs_gen_files.open("reference/mcp.md", "w") as page:
    page.write("\n".join(lines))
