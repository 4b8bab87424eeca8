"""JSON Schema documents: the draft a schema declares, and validators compiled once.

A schema is checked and compiled (in the draft its ``$schema`` names; 2020-12 when it
names none) once, then served from a cache keyed by its canonical JSON. Schemas and
data may come from a caller, so nothing here can stall the process: patterns run on
RE2 in linear time, sizes and nesting are capped, and :func:`bounded_errors` stops a
validation that loops or outgrows its work budget (see ``_limits``).
"""

from colony.schemas._drafts import validator_class
from colony.schemas._engine import compiled_validator
from colony.schemas._limits import (
    MAX_NESTING,
    MAX_SCHEMA_BYTES,
    MAX_VALIDATION_STEPS,
    ValidationRefused,
)
from colony.schemas._patterns import MAX_PATTERN_CHARS, MAX_PATTERN_NESTING
from colony.schemas._run import bounded_errors

__all__ = [
    "MAX_NESTING",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_NESTING",
    "MAX_SCHEMA_BYTES",
    "MAX_VALIDATION_STEPS",
    "ValidationRefused",
    "bounded_errors",
    "compiled_validator",
    "validator_class",
]
