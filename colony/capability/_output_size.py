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
from collections.abc import Callable
from operator import itemgetter
from typing import Any, Literal, get_args, get_origin

from typing_extensions import get_type_hints, is_typeddict

from colony.errors import ToolOutputError, ToolOutputTooLargeError

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "check_output_size", "json_size", "json_size_bound", "typed_dict_bound"]

#: The cap a tool gets unless it declares its own.
DEFAULT_MAX_OUTPUT_BYTES = 1 << 20
#: Bytes that surely hold a float, a 64-bit int, true, false or null as JSON.
_SCALAR = 24
_SMALL_INT = 1 << 63
_SCALARS = frozenset({float, bool, type(None)})
#: Python refuses to print an int of more digits (sys.int_info.str_digits_check_threshold).
_INT = 4300 + 1
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


def typed_dict_bound(returns: Any) -> Callable[[Any], int | None] | None:
    """For a TypedDict of strings and scalars, a bound computed from its string fields alone.

    The field names and the scalars are counted once, here; a call then only adds up
    the lengths of its strings. None for any other return type; the bound itself is
    None for a result that is not such a dict (the full check then runs).
    """
    if not is_typeddict(returns):
        return None
    fields = get_type_hints(returns)
    strings: list[str] = []
    fixed = 2
    for name, annotation in fields.items():
        fixed += 6 * len(name) + 6
        if annotation is str or (
            get_origin(annotation) is Literal and all(type(a) is str for a in get_args(annotation))
        ):
            strings.append(name)
        elif annotation in (float, bool):
            fixed += _SCALAR
        elif annotation is int:
            fixed += _INT
        else:
            return None
    count = len(fields)
    if not strings:
        return lambda result: fixed if type(result) is dict and len(result) == count else None
    lengths = itemgetter(*strings) if len(strings) > 1 else (lambda result: (result[strings[0]],))

    def bound(result: Any) -> int | None:
        try:  # not a dict of these fields: KeyError or TypeError, and the full check runs
            if len(result) == count:
                return fixed + 6 * sum(map(len, lengths(result)))
        except (KeyError, TypeError):
            pass
        return None

    return bound
