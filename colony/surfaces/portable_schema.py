"""Tool schemas every MCP client reads the same way.

JSON Schema allows forms that many MCP clients and model providers mishandle,
and that the MCP Inspector's ``--strict`` schema check reports: a ``type``
spelled as a list (``["string", "null"]``), which clients that read ``type`` as
one string reject or drop; a subschema with no validation keyword at all
(``{}``, "any value"); and a bare ``true``/``false`` where a schema object is
expected. The surfaces serve every schema through ``portable_schema``, which
rewrites each into an equivalent form (``anyOf`` branches with one ``type``
each; ``{"not": {}}`` for ``false``), so a client accepts exactly the JSON it
accepted before; ``portability_problems`` names whatever is left.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["ANY_JSON", "portability_problems", "portable_schema"]

# "Any JSON value", spelled so that each branch names one type.
ANY_JSON: dict[str, Any] = {
    "anyOf": [
        {"type": "object"},
        {"type": "array"},
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
    ]
}
NOTHING: dict[str, Any] = {"not": {}}

# Keywords that only constrain instances of one type: they travel with that type's branch.
_KEYWORDS_BY_TYPE: dict[str, frozenset[str]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "array": frozenset(
        {"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains"}
    ),
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
        }
    ),
}
_KEYWORDS_BY_TYPE["integer"] = _KEYWORDS_BY_TYPE["number"]

# A schema carrying any of these validates something; one with none accepts every value.
_CONSTRAINING = frozenset(
    {
        *("type", "enum", "const", "required", "dependentRequired", "uniqueItems", "format", "pattern"),
        *("multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength"),
        *("maxItems", "minItems", "maxContains", "minContains", "maxProperties", "minProperties"),
        *("contentMediaType", "contentEncoding", "contentSchema"),
        *("allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems"),
        *("unevaluatedItems", "properties", "patternProperties", "additionalProperties", "unevaluatedProperties"),
        *("propertyNames", "dependentSchemas", "dependencies", "$ref", "$dynamicRef", "$recursiveRef"),
    }
)

# Where subschemas sit: one schema, a list of schemas, or a mapping of name -> schema.
_ONE = (
    *("items", "contains", "not", "propertyNames", "if", "then", "else", "contentSchema"),
    *("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"),
)
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAPPING = ("properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions")
# A boolean here means "allowed or not", which every client reads; it is left as written.
_BOOLEAN_OK = frozenset({"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"})


def portable_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without type lists, untyped or boolean subschemas, accepting exactly the same JSON.

    A ``type`` list becomes ``anyOf`` branches, each type taking the keywords that
    apply to it; an unconstrained subschema becomes ``ANY_JSON`` plus its
    annotations; ``true`` becomes ``ANY_JSON`` and ``false`` ``{"not": {}}``.
    """
    rewritten: dict[str, Any] = _rewrite(dict(schema), None)  # a mapping stays a mapping
    return rewritten


def portability_problems(schema: Any) -> list[str]:
    """Each place in ``schema`` a strict MCP client warns about, as ``'<JSON pointer>: <what and why>'``."""
    problems: list[str] = []
    _check(schema, "#", None, problems)
    return problems


def _constrains(schema: Mapping[str, Any]) -> bool:
    return bool(_CONSTRAINING & set(schema)) or ("if" in schema and ("then" in schema or "else" in schema))


def _subschemas(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(pointer step, keyword, subschema) for each schema position directly under ``schema``."""
    for key in _ONE:
        if key not in schema:
            continue
        if key == "items" and isinstance(schema[key], list):  # a list of items: drafts before 2020-12
            yield from ((f"items/{index}", key, child) for index, child in enumerate(schema[key]))
        else:
            yield key, key, schema[key]
    for key in _LIST:
        if isinstance(schema.get(key), list):
            yield from ((f"{key}/{index}", key, child) for index, child in enumerate(schema[key]))
    for key in _MAPPING:
        if isinstance(schema.get(key), Mapping):
            for name, child in schema[key].items():
                if isinstance(child, Mapping | bool):  # `dependencies` may also map to a list of names
                    yield f"{key}/{name}", key, child


def _check(schema: Any, path: str, keyword: str | None, problems: list[str]) -> None:
    if isinstance(schema, bool):
        if keyword not in _BOOLEAN_OK:
            problems.append(f"{path}: a bare {str(schema).lower()} where a schema object is expected")
        return
    if not isinstance(schema, Mapping):
        return
    if isinstance(schema.get("type"), list):
        problems.append(f"{path}: type is a list {schema['type']}; use anyOf branches with one type each")
    if not _constrains(schema) and keyword != "not":
        problems.append(f"{path}: no validation keyword, so any value passes; say what the value is")
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref and not ref.startswith("#"):
        problems.append(f"{path}: $ref {ref!r} points outside the schema, and clients do not fetch it")
    for step, child_keyword, child in _subschemas(schema):
        _check(child, f"{path}/{step}", child_keyword, problems)


def _rewrite(schema: Any, keyword: str | None) -> Any:
    if isinstance(schema, bool):
        if keyword in _BOOLEAN_OK:
            return schema
        return dict(ANY_JSON) if schema else dict(NOTHING)
    if not isinstance(schema, Mapping):
        return schema
    copy = dict(schema)
    rewrite = _rewrite
    for key in _ONE:
        if key in copy:
            value = copy[key]
            copy[key] = [rewrite(child, key) for child in value] if isinstance(value, list) else rewrite(value, key)
    for key in _LIST:
        if isinstance(copy.get(key), list):
            copy[key] = [rewrite(child, key) for child in copy[key]]
    for key in _MAPPING:
        if isinstance(copy.get(key), Mapping):
            copy[key] = {name: rewrite(child, key) for name, child in copy[key].items()}
    if keyword is not None and keyword != "not" and not _constrains(copy):
        return {**copy, **ANY_JSON}
    return _split_type_list(copy)


def _split_type_list(schema: dict[str, Any]) -> dict[str, Any]:
    types = schema.get("type")
    if not isinstance(types, list):
        return schema
    if len(types) == 1:
        return {**schema, "type": types[0]}
    specific = set().union(*(_KEYWORDS_BY_TYPE.get(name, frozenset()) for name in types))
    shared = {key: value for key, value in schema.items() if key != "type" and key not in specific}
    branches = [
        {"type": name, **{key: schema[key] for key in _KEYWORDS_BY_TYPE.get(name, ()) if key in schema}}
        for name in types
    ]
    if "anyOf" in shared:  # keep the schema's own anyOf as a further condition
        shared["allOf"] = [*shared.get("allOf", []), {"anyOf": shared.pop("anyOf")}]
    return {**shared, "anyOf": branches}
