"""Validator classes that are safe to run on a caller's schema and data.

Each draft's class is extended (``jsonschema.validators.extend``) so that
``pattern``, ``patternProperties``, ``additionalProperties``,
``unevaluatedProperties`` and the ``regex`` format use RE2; ``uniqueItems``,
``enum`` and ``const`` hash instead of comparing pair by pair; every keyword is
metered and every reference guarded against loops (see ``_budget``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema import Draft201909Validator, FormatChecker
from jsonschema.protocols import Validator
from jsonschema.validators import extend

from colony.schemas import _keywords
from colony.schemas._budget import guarded_reference, metered
from colony.schemas._patterns import InvalidPattern, PatternError, UnsupportedPattern, compile_pattern

__all__ = ["RegexFormatRefused", "dialect_of", "safe_class", "schema_formats"]

_REPLACED: dict[str, Callable[..., Any]] = {
    "pattern": _keywords.pattern,
    "patternProperties": _keywords.pattern_properties,
    "additionalProperties": _keywords.additional_properties,
    "uniqueItems": _keywords.unique_items,
    "enum": _keywords.enum,
    "const": _keywords.const,
}
_REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
_SCHEMA_FORMATS: dict[type[Validator], FormatChecker] = {}
_SAFE_CLASSES: dict[type[Validator], type[Validator]] = {}


class RegexFormatRefused(Exception):
    """A data string checked as ``format: regex`` that RE2 will not run (not: one that is no regex)."""

    def __init__(self, error: PatternError) -> None:
        super().__init__(str(error))
        self.error = error


def dialect_of(cls: type[Validator]) -> str:
    """The meta-schema URI of a draft's validator class."""
    return str(cls.META_SCHEMA.get("$id", cls.META_SCHEMA.get("id", "")))


def schema_formats(cls: type[Validator]) -> FormatChecker:
    """``cls``'s format checks with an RE2 ``regex``, for checking a schema: any pattern error is a schema error."""
    if cls not in _SCHEMA_FORMATS:
        _SCHEMA_FORMATS[cls] = _formats(cls.FORMAT_CHECKER, _is_regex, PatternError)
    return _SCHEMA_FORMATS[cls]


def safe_class(cls: type[Validator]) -> type[Validator]:
    """``cls`` with RE2 patterns, hashed comparisons, metered keywords and guarded references."""
    if cls not in _SAFE_CLASSES:
        _SAFE_CLASSES[cls] = _safe_class(cls)
    return _SAFE_CLASSES[cls]


def _safe_class(cls: type[Validator]) -> type[Validator]:
    keywords = {**cls.VALIDATORS, **{name: fn for name, fn in _REPLACED.items() if name in cls.VALIDATORS}}
    if "unevaluatedProperties" in keywords:
        legacy = cls is Draft201909Validator
        keywords["unevaluatedProperties"] = (
            _keywords.unevaluated_properties_2019 if legacy else _keywords.unevaluated_properties
        )
    wrapped = {
        name: guarded_reference(name, metered(name, fn)) if name in _REFERENCES else metered(name, fn)
        for name, fn in keywords.items()
    }
    # On data, a string that is no regex fails the format; one RE2 will not run is refused.
    data_formats = _formats(cls.FORMAT_CHECKER, _data_regex, InvalidPattern)
    safe: type[Validator] = extend(cls, wrapped, format_checker=data_formats)
    return safe


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compile_pattern(instance)
    return True


def _data_regex(instance: object) -> bool:
    try:
        return _is_regex(instance)
    except UnsupportedPattern as error:
        raise RegexFormatRefused(error) from None


def _formats(base: FormatChecker, check: Callable[[object], bool], raises: type[Exception]) -> FormatChecker:
    """``base``'s format checks, with ``regex`` checked by ``check``."""
    checker = FormatChecker(formats=())
    checker.checkers = {**base.checkers, "regex": (check, raises)}
    return checker
