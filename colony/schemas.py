"""JSON Schema documents: the draft a schema declares, and validators compiled once.

A schema is checked and compiled (in the draft its ``$schema`` names; 2020-12 when it
names none) once, then served from a cache keyed by its canonical JSON.
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

__all__ = ["compiled_validator", "validator_class"]


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
