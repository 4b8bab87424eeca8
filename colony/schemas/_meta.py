"""A caller's schema checked against its draft's meta-schema, within the work budget.

jsonschema's ``check_schema`` costs about half a millisecond per subschema on
draft 2020-12, so 256 KiB of ``{}`` in an ``allOf`` holds a worker for half a
minute. Here the same meta-schemas run on the safe validator class, metered, with
RE2 checking ``format: regex``. They are copies without ``$schema``, in a
registry of their own, so that class stays in charge of every vocabulary.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY
from referencing import Registry
from referencing.jsonschema import specification_with

from colony.schemas._classes import dialect_of, safe_class, schema_formats
from colony.schemas._limits import ValidationRefused
from colony.schemas._patterns import PatternError, UnsupportedPattern
from colony.schemas._run import bounded_errors

__all__ = ["check_schema"]

_META_VALIDATORS: dict[type[Validator], Validator] = {}


def check_schema(schema: Any, cls: type[Validator]) -> None:
    """Refuse ``schema`` unless it is valid under ``cls``'s meta-schema.

    Raises:
        SchemaError: the first way it is not (a pattern that is no regular expression included).
        ValidationRefused: a pattern RE2 cannot run, or a schema too big to check within the budget.
    """
    found = bounded_errors(_meta_validator(cls), schema, max_errors=1, subject="schema")
    if not found:
        return
    error = found[0]
    if isinstance(error.cause, PatternError):
        raise _pattern_error(error.path, error.cause)
    raise SchemaError.create_from(error)


def _pattern_error(path: Any, cause: PatternError) -> Exception:
    """The meta-schema's ``format: regex`` failure, told as the keyword and pattern at fault."""
    parts = list(path)
    keyword = "patternProperties" if parts and parts[-1] == "patternProperties" else "pattern"
    where = "/".join(str(part) for part in parts) or "<root>"
    if isinstance(cause, UnsupportedPattern):
        return ValidationRefused("schema", f"{keyword} {cause} (at {where})")
    return SchemaError(f"{keyword} {cause.pattern!r} is not a regular expression: {cause.reason}", path=path)


def _meta_validator(cls: type[Validator]) -> Validator:
    if cls not in _META_VALIDATORS:
        dialect = dialect_of(cls)
        specification = specification_with(dialect)
        folder = dialect.rstrip("#").rsplit("/", 1)[0] + "/"
        resources = [
            (uri, specification.create_resource(_without_dialect(resource.contents)))
            for uri, resource in REGISTRY.items()
            if uri.startswith(folder)
        ]
        registry = Registry().with_resources(resources).crawl()
        root = registry[dialect.rstrip("#")]
        safe = safe_class(cls)
        _META_VALIDATORS[cls] = safe(
            root.contents, format_checker=schema_formats(cls), _resolver=registry.resolver_with_root(root)
        )
    return _META_VALIDATORS[cls]


def _without_dialect(contents: Any) -> Any:
    """A copy of a meta-schema with every ``$schema`` keyword (a string) removed."""
    copy = json.loads(json.dumps(contents))
    pending = [copy]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$schema"), str):
                del node["$schema"]
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return copy
