"""The JSON Schema draft a schema declares in ``$schema``."""

from __future__ import annotations

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

__all__ = ["validator_class"]


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
