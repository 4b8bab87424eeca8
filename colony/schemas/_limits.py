"""How big, how deep and how costly a caller's schema and data may be.

Each cap turns what would be a stalled worker, a RecursionError or a cache full
of giant schemas into a refusal that names the cap.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = [
    "MAX_CACHED_SCHEMA_BYTES",
    "MAX_NESTING",
    "MAX_SCHEMA_BYTES",
    "MAX_VALIDATION_STEPS",
    "ValidationRefused",
    "check_nesting",
]

#: Largest schema compiled, as compact JSON.
MAX_SCHEMA_BYTES = 1 << 20
#: Largest schema kept in the compiled-validator cache; bigger ones are compiled per call.
MAX_CACHED_SCHEMA_BYTES = 32 << 10
#: Deepest nesting of arrays and objects in a schema or in the data.
MAX_NESTING = 64
#: Work one validation may do: one step per keyword evaluated, plus the size of the
#: arrays and objects it walks (see ``colony.schemas._budget``).
MAX_VALIDATION_STEPS = 2_000_000


class ValidationRefused(ValueError):
    """A schema or data this module will not validate; ``field`` says which of the two is at fault."""

    def __init__(self, field: Literal["schema", "data"], message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def check_nesting(value: Any, field: Literal["schema", "data"], limit: int = MAX_NESTING) -> None:
    """Refuse ``value`` if its arrays and objects nest deeper than ``limit``; level by level, without recursion."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            raise ValidationRefused(field, f"{field} nests arrays and objects more than {limit} levels deep")
        below = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, (dict, list)):
                    below.append(child)
        level = below
