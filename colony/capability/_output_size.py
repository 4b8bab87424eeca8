"""How big an action's answer is on the wire, checked without encoding small ones.

A tool's output is capped (``ToolCapability.max_output_bytes``) so that one call
cannot make the process build and send hundreds of megabytes. The size is that of
the compact UTF-8 JSON the gateway and the MCP server send. Measuring it exactly
means encoding the result, so a walk first bounds it from above (a string of n
characters encodes to at most 6n + 2 bytes); only a result whose bound passes the
cap is encoded. Small results, the common case, cost a short walk.
"""

from __future__ import annotations

import json
from typing import Any

from colony.errors import ToolOutputError, ToolOutputTooLargeError

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "check_output_size", "json_size", "json_size_bound"]

#: The cap a tool gets unless it declares its own.
DEFAULT_MAX_OUTPUT_BYTES = 1 << 20
#: Bytes that surely hold a float, a 64-bit int, true, false or null as JSON.
_SCALAR = 24
_SMALL_INT = 1 << 63
_SCALARS = frozenset({float, bool, type(None)})
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def check_output_size(action: str, result: Any, limit: int) -> None:
    """Refuse ``result`` if its JSON is over ``limit`` bytes.

    Raises:
        ToolOutputTooLargeError: naming the action, the size and the limit.
        ToolOutputError: the result cannot be encoded as JSON at all (a cycle).
    """
    if type(result) is dict:  # the common answer, checked inline: this runs on every call
        flat = _flat_bound(result)
        if flat is not None and flat <= limit:
            return
    if json_size_bound(result, limit) <= limit:
        return
    size = json_size(result, action)
    if size > limit:
        raise ToolOutputTooLargeError(
            f"{action} returned {size:,} bytes of JSON; this tool's output is capped at {limit:,} bytes",
            action=action,
            size_bytes=size,
            limit_bytes=limit,
        )


def json_size(value: Any, action: str = "the action") -> int:
    """The exact size of ``value`` as compact UTF-8 JSON, in bytes."""
    try:
        text = _ENCODER.encode(value)
    except (ValueError, RecursionError) as error:
        raise ToolOutputError(f"{action} returned a result that cannot be encoded as JSON: {error}") from None
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def json_size_bound(value: Any, limit: int) -> int:
    """An upper bound of ``value``'s JSON size; the walk stops as soon as the bound passes ``limit``."""
    if type(value) is dict:
        flat = _flat_bound(value)
        if flat is not None:
            return flat
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str:
            total += 6 * len(item) + 2
        elif kind is dict:
            total += 2 + 2 * len(item)
            total += sum(6 * len(key) + 2 if type(key) is str else _SCALAR for key in item)
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            total += 2 + len(item)
            pending.extend(item)
        elif kind is float or kind is bool or item is None:
            total += _SCALAR
        elif kind is int:
            total += _SCALAR if -_SMALL_INT < item < _SMALL_INT else item.bit_length() // 3 + 2
        else:  # anything else is encoded as its str() (or its own str/int subclass value)
            total += 6 * len(str(item)) + 2
        if total > limit:
            return total
    return total


def _flat_bound(value: dict[Any, Any]) -> int | None:
    """The bound of a dict of strings and small scalars under string keys, or None when it holds anything else."""
    chars = 0
    for key, item in value.items():
        kind = type(item)
        if type(key) is not str:
            return None
        if kind is str:
            chars += len(key) + len(item)
        elif kind in _SCALARS or (kind is int and -_SMALL_INT < item < _SMALL_INT):
            chars += len(key)
        else:
            return None
    # Each member: quoted key, colon, comma, and a quoted string or a scalar.
    return 6 * chars + (_SCALAR + 6) * len(value) + 2
