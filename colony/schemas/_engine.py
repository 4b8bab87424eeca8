"""Validators compiled once per distinct schema, from a private, checked copy of it."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.jsonschema import specification_with

from colony.schemas._classes import dialect_of, safe_class
from colony.schemas._dialects import one_dialect
from colony.schemas._drafts import validator_class
from colony.schemas._limits import MAX_CACHED_SCHEMA_BYTES, MAX_SCHEMA_BYTES, ValidationRefused, check_nesting
from colony.schemas._meta import check_schema

__all__ = ["compiled_validator"]


def compiled_validator(schema: Any) -> Validator:
    """A checked validator for ``schema`` (draft from ``$schema``), compiled once per distinct schema.

    Raises:
        SchemaError: ``schema`` is not a valid schema of its draft (a pattern that is
            no regular expression included), or not JSON at all.
        ValidationRefused: ``schema`` is over the size or nesting caps, too big to
            check within the work budget, or has a pattern RE2 cannot run
            (backreferences, lookaround).
    """
    try:
        key = json.dumps(schema, sort_keys=True, allow_nan=False, separators=(",", ":"))
    except RecursionError:
        check_nesting(schema, "schema")  # deeper than the encoder recurses: far over the cap
        raise
    except (TypeError, ValueError) as error:
        raise SchemaError(f"not a JSON document: {error}") from None
    if len(key) > MAX_SCHEMA_BYTES:
        raise ValidationRefused(
            "schema", f"schema is {len(key)} bytes as JSON; at most {MAX_SCHEMA_BYTES} are compiled"
        )
    return _compiled(key) if len(key) <= MAX_CACHED_SCHEMA_BYTES else _compile(json.loads(key))


@lru_cache(maxsize=256)
def _compiled(schema_json: str) -> Validator:
    return _compile(json.loads(schema_json))


def _compile(schema: Any) -> Validator:
    """Check ``schema`` (a private copy: it is changed) and build its safe validator."""
    check_nesting(schema, "schema")
    cls = validator_class(schema)
    check_schema(schema, cls)
    one_dialect(schema, cls)
    safe = safe_class(cls)
    # References resolve inside the schema only: not even to the drafts' meta-schemas, whose
    # own ``$schema`` would hand validation back to jsonschema's stock classes.
    root = specification_with(dialect_of(cls)).create_resource(schema)
    base = root.id() or ""
    resolver = Registry().with_resource(base, root).crawl().resolver(base_uri=base)
    return safe(schema, format_checker=safe.FORMAT_CHECKER, _resolver=resolver)
