"""One draft per schema, so every subschema is checked by the safe validator class.

jsonschema picks the validator class of each subschema it enters from that
subschema's ``$schema``: a subschema (or the root, re-entered through
``$ref: "#"``) that names a draft would be checked by jsonschema's stock class,
with Python's backtracking ``re``. So in the private copy a validator is built
from, ``$schema`` is removed wherever it names the root's own draft; a
subschema naming another draft is refused, and so is a draft named anywhere a
reference could reach but the walk of subschemas does not (inside ``const``,
say), since removing it there would change the data it stands for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing.jsonschema import specification_with

from colony.schemas._limits import ValidationRefused

__all__ = ["one_dialect"]


def one_dialect(schema: Any, cls: type[Validator]) -> None:
    """Remove ``$schema`` from ``schema``'s subschemas (in place), or refuse a second draft."""
    dialect = str(cls.META_SCHEMA.get("$id", cls.META_SCHEMA.get("id", "")))
    specification = specification_with(dialect)
    pending = [schema]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        declared = node.get("$schema")
        if isinstance(declared, str) and declared.rstrip("#") == dialect.rstrip("#"):
            del node["$schema"]
        elif isinstance(declared, str) and validator_for(node, default=None) is not None:
            raise ValidationRefused(
                "schema",
                f"a subschema declares $schema {declared!r}, another draft than the root's {dialect!r}; "
                "one draft per schema is supported",
            )
        pending.extend(specification.subresources_of(node))
    for where, node in _objects(schema, ""):
        if isinstance(node.get("$schema"), str) and validator_for(node, default=None) is not None:
            raise ValidationRefused(
                "schema",
                f"$schema {node['$schema']!r} at {where or '<root>'} is not in a subschema; "
                "a draft named outside a subschema is not supported",
            )


def _objects(value: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object in ``value`` with its JSON pointer (nesting is capped before this runs)."""
    if isinstance(value, dict):
        yield where, value
        for key, item in value.items():
            yield from _objects(item, f"{where}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, f"{where}/{index}")
