"""JSON Schema helpers for actions: clean derived schemas, compare with declared ones.

Comparing a schema derived from Python types with the declared one means a signature
cannot drift from the contract the model reads.
"""

from __future__ import annotations

from typing import Any

__all__ = ["clean_schema", "schema_mismatches"]

_COMPARED_KEYWORDS = (
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "default",
)


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline pydantic's ``$defs`` and drop its generated titles."""
    definitions = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node and node["$ref"].startswith("#/$defs/"):
                return walk(definitions[node["$ref"].removeprefix("#/$defs/")])
            return {
                key: walk(value)
                for key, value in node.items()
                if key not in ("title", "$defs") or (key == "title" and not isinstance(value, str))
            }
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    cleaned: dict[str, Any] = walk(schema)
    return cleaned


def schema_mismatches(declared: dict[str, Any], derived: dict[str, Any], path: str = "") -> list[str]:
    """Where ``derived`` (from Python types) disagrees with ``declared``.

    Only what the declared schema states is compared, so a declared schema may
    leave things open; but every property, required key and constraint it names
    must be what the code enforces.
    """
    where = path or "<root>"
    problems: list[str] = []
    for keyword in _COMPARED_KEYWORDS:
        if keyword in declared and declared[keyword] != derived.get(keyword):
            if keyword == "type" and _type_compatible(declared["type"], derived):
                continue
            problems.append(
                f"{where}: {keyword} is {declared[keyword]!r} in the spec, "
                f"{derived.get(keyword, '<absent>')!r} in the code"
            )
    if "properties" in declared:
        wanted, have = declared["properties"], derived.get("properties", {})
        for missing in sorted(set(wanted) - set(have)):
            problems.append(f"{where}: property {missing!r} is in the spec but not in the code")
        for extra in sorted(set(have) - set(wanted)):
            problems.append(f"{where}: property {extra!r} is in the code but not in the spec")
        for name in sorted(set(wanted) & set(have)):
            problems += schema_mismatches(wanted[name], have[name], f"{path}.{name}".lstrip("."))
        if set(declared.get("required", [])) != set(derived.get("required", [])):
            problems.append(
                f"{where}: required is {sorted(declared.get('required', []))} in the spec, "
                f"{sorted(derived.get('required', []))} in the code"
            )
    if declared.get("additionalProperties") is False and derived.get("additionalProperties") is not False:
        problems.append(f"{where}: the spec forbids additional properties, the code allows them")
    if isinstance(declared.get("items"), dict) and isinstance(derived.get("items"), dict):
        problems += schema_mismatches(declared["items"], derived["items"], f"{path}[]")
    return problems


def _type_compatible(declared_type: Any, derived: dict[str, Any]) -> bool:
    """Accept pydantic's ``anyOf`` spelling of a union the spec writes as a type list."""
    variants = {option.get("type") for option in derived.get("anyOf", [])}
    wanted = set(declared_type) if isinstance(declared_type, list) else {declared_type}
    return bool(variants) and variants == wanted
