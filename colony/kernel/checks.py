"""The kernel's input checks: each raises KernelInputError naming the field at fault.

Shared by the request models, the falsification worker and the kernel's own arguments, so
a NUL character, a number that is no amount or JSON that is no object reads the same
wherever it is sent.
"""

from __future__ import annotations

import json
import math
import reprlib
from typing import Any

from colony.errors import KernelInputError

__all__ = [
    "BUDGET_DIMENSIONS",
    "MAX_AMOUNT",
    "check_amount",
    "check_estimate",
    "check_name",
    "check_text",
    "parse_json_object",
]

MAX_AMOUNT = 1e9  # per ledger dimension: larger is no estimate (and 1e400 parses as infinity)


def check_text(value: str, field: str) -> str:
    """``value``, or KernelInputError naming ``field`` when it holds a NUL character.

    No database stores NUL in text (PostgreSQL refuses it), and no identifier needs one.
    """
    if "\x00" in value:
        raise KernelInputError.for_field(
            field, f"contains a NUL character at offset {value.index(chr(0))}", expected="text without NUL (\\u0000)"
        )
    return value


def parse_json_object(text: str, field: str) -> dict[str, Any]:
    """Parse ``text`` as a JSON object or raise KernelInputError naming ``field``."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:  # also a number too long to convert
        raise KernelInputError.for_field(field, f"not valid JSON ({error})", expected="a JSON object") from None
    if not isinstance(value, dict):
        raise KernelInputError.for_field(field, f"JSON {type(value).__name__} given", expected="a JSON object")
    return value


BUDGET_DIMENSIONS = ("llm_calls", "runtime_seconds")
_DIMENSIONS = frozenset(BUDGET_DIMENSIONS)


def check_amount(amount: Any, field: str) -> None:
    """Raise KernelInputError naming ``field`` unless ``amount`` is a finite number in [0, MAX_AMOUNT]."""
    number = isinstance(amount, int | float) and not isinstance(amount, bool)
    if not number or not -MAX_AMOUNT <= amount <= MAX_AMOUNT or not math.isfinite(amount) or amount < 0:
        shown = reprlib.repr(amount) if not isinstance(amount, int) or abs(amount) < 10**30 else "a huge integer"
        raise KernelInputError.for_field(field, f"{shown} given", expected=f"a finite number in [0, {MAX_AMOUNT:g}]")


def check_estimate(value: dict[str, Any], field: str = "budget_estimate") -> None:
    """Raise KernelInputError unless ``value`` maps known ledger dimensions to finite numbers >= 0.

    The error names ``field`` for an unknown dimension and ``field.<dimension>`` for a bad amount.
    """
    unknown = [] if value.keys() <= _DIMENSIONS else sorted(set(value) - _DIMENSIONS)
    if unknown:
        raise KernelInputError.for_field(
            field, f"unknown budget dimension(s) {unknown}", expected=f"some of {list(BUDGET_DIMENSIONS)}"
        )
    for name, amount in value.items():
        check_amount(amount, f"{field}.{name}")


def check_name(value: Any, field: str, max_length: int) -> str:
    """``value`` if it is a non-empty string of at most ``max_length`` characters without NUL."""
    if not isinstance(value, str) or not value.strip():
        raise KernelInputError.for_field(field, f"{value!r} given", expected="a non-empty string")
    if len(value) > max_length:
        raise KernelInputError.for_field(field, f"{len(value)} characters", expected=f"at most {max_length}")
    return check_text(value, field)
