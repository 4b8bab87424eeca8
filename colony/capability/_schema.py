"""JSON Schema helpers: derive, clean, compare and compile schemas.

A schema derived from Python types is compared with a
declared one so a signature cannot drift from the contract the model reads.
A schema is checked and compiled (in the draft its ``$schema`` names) once,
then served from a cache keyed by its canonical JSON.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import (
    Draft3Validator,
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

__all__ = ["clean_schema", "compiled_validator", "schema_mismatches", "validator_class"]

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


_DRAFTS: dict[str, type[Validator]] = {
    str(cls.META_SCHEMA.get("$id", cls.META_SCHEMA.get("id", ""))).rstrip("#"): cls
    for cls in (
        Draft3Validator,
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    )
}


def validator_class(schema: Any) -> type[Validator]:
    """The draft ``schema`` declares in ``$schema``; 2020-12 when it declares none.

    Raises:
        SchemaError: ``$schema`` names a dialect jsonschema does not implement.
    """
    if not isinstance(schema, dict) or "$schema" not in schema:
        return Draft202012Validator
    declared = schema["$schema"]
    cls = _DRAFTS.get(declared.rstrip("#")) if isinstance(declared, str) else None
    if cls is None:
        known = ", ".join(sorted(_DRAFTS))
        raise SchemaError(f"unknown $schema {declared!r} (known dialects: {known})")
    return cls


@lru_cache(maxsize=256)
def _compiled(schema_json: str) -> Validator:
    schema = json.loads(schema_json)
    cls = validator_class(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def compiled_validator(schema: Any) -> Validator:
    """A checked validator for ``schema`` (draft from ``$schema``), compiled once per distinct schema.

    Raises:
        SchemaError: ``schema`` is not a valid schema of its draft, or not JSON at all.
    """
    try:
        key = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise SchemaError(f"not a JSON document: {error}") from None
    return _compiled(key)


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
