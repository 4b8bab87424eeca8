"""The HTTP reference: the OpenAPI document the gateway serves, as a page and as ``openapi.json``."""

from __future__ import annotations

import json
from typing import Any

import mkdocs_gen_files

from colony.surfaces.gateway import create_app
from colony.surfaces.gateway.settings import GatewaySettings


def operation_lines(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    """One operation: its summary, description, request body and answers."""
    lines = [f"## `{method.upper()} {path}`", "", f"**{operation.get('summary', '')}**", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | required | schema |", "|---|---|---|---|"]
        for parameter in parameters:
            schema = json.dumps(parameter.get("schema", {}))
            required = "yes" if parameter.get("required") else "no"
            lines.append(f"| `{parameter['name']}` | {parameter['in']} | {required} | `{schema}` |")
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        lines += [f"Request body: `{json.dumps(body)}`", ""]
    lines += ["| status | meaning |", "|---|---|"]
    for status, answer in operation.get("responses", {}).items():
        meaning = " ".join(str(answer.get("description", "")).split()).replace("<", "&lt;").replace("|", "\\|")
        lines.append(f"| {status} | {meaning} |")
    return [*lines, ""]


def page(schema: dict[str, Any]) -> str:
    """The reference page for ``schema``, every path and method in the document's order."""
    lines = [
        "# HTTP API",
        "",
        f"Generated at build time from the OpenAPI document the gateway serves at `/openapi.json` "
        f"({schema['info']['title']} {schema['info']['version']}); the whole document: "
        "[openapi.json](openapi.json). A running gateway also serves it as `/docs` and `/redoc`.",
        "",
    ]
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            lines += operation_lines(path, method, operation)
    lines += ["## Schemas", ""]
    for name, definition in schema.get("components", {}).get("schemas", {}).items():
        lines += [f"### {name}", "", "```json", json.dumps(definition, indent=2), "```", ""]
    return "\n".join(lines)


document = create_app(GatewaySettings()).openapi()
with mkdocs_gen_files.open("reference/openapi.json", "w") as output:
    json.dump(document, output, indent=2)
with mkdocs_gen_files.open("reference/http.md", "w") as output:
    output.write(page(document))
