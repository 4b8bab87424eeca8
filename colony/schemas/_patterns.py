r"""Regular expressions from JSON Schemas, run by RE2 so that a match takes linear time.

JSON Schema patterns are ECMA-262 regular expressions. Python's ``re`` backtracks,
so ``^(a+)+$`` on thirty ``a``s and a ``!`` runs for minutes; RE2 never backtracks.
A pattern RE2 cannot run that way (backreferences, lookaround) is refused, never
handed to ``re``. Before RE2 sees a pattern its length and group nesting are
capped, and ECMA's ``\uXXXX`` escapes are spelled the way RE2 reads them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

__all__ = [
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_NESTING",
    "InvalidPattern",
    "PatternError",
    "UnsupportedPattern",
    "compile_pattern",
    "schema_pattern",
]

#: Longest pattern compiled, in characters.
MAX_PATTERN_CHARS = 8192
#: Deepest nesting of groups in a pattern.
MAX_PATTERN_NESTING = 100
#: Memory RE2 may use for one compiled pattern and its match cache.
_RE2_MAX_MEM = 2 << 20
_HEX = frozenset("0123456789abcdefABCDEF")
#: RE2's words for a valid expression over its own size limits (not a syntax error).
_RE2_LIMITS = ("too large", "too deep", "repetition size")


class PatternError(ValueError):
    """A pattern that cannot be used; ``reason`` says why, ``keyword`` where it came from (once known)."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"{_shown(pattern)}: {reason}")
        self.pattern = pattern
        self.reason = reason
        self.keyword: str | None = None


class InvalidPattern(PatternError):
    """Not a regular expression at all (unbalanced, a bad escape, a bad repetition)."""


class UnsupportedPattern(PatternError):
    """A regular expression that cannot run in linear time here, or is over the caps."""


def _options() -> Any:
    options = re2.Options()
    options.max_mem = _RE2_MAX_MEM
    options.never_capture = True  # only "does it match" is asked
    options.log_errors = False
    return options


_OPTIONS = _options()


def compile_pattern(pattern: str) -> Any:
    """``pattern`` (ECMA-262) compiled by RE2.

    Raises:
        UnsupportedPattern: it uses backreferences or lookaround, or is over the caps.
        InvalidPattern: it is not a regular expression.
    """
    translated = _to_re2(pattern)
    try:
        return re2.compile(translated, _OPTIONS)
    except re2.error as error:
        reason = _re2_reason(error)
        if any(limit in reason for limit in _RE2_LIMITS):
            raise UnsupportedPattern(pattern, f"too large for RE2 to compile ({reason})") from None
        raise InvalidPattern(pattern, reason) from None


@lru_cache(maxsize=512)
def schema_pattern(pattern: str) -> Any:
    """:func:`compile_pattern`, cached: a schema's patterns are matched again and again."""
    return compile_pattern(pattern)


def _re2_reason(error: Exception) -> str:
    detail = error.args[0] if error.args else error
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


def _shown(pattern: str) -> str:
    return repr(pattern) if len(pattern) <= 80 else f"{pattern[:77]!r}... ({len(pattern)} characters)"


def _to_re2(pattern: str) -> str:
    """``pattern`` with ECMA-only syntax respelled; refuses what RE2 cannot run or is over the caps."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsupportedPattern(pattern, f"{len(pattern)} characters long; at most {MAX_PATTERN_CHARS} are compiled")
    out: list[str] = []
    depth = 0
    in_class = False
    index = 0
    end = len(pattern)
    while index < end:
        char = pattern[index]
        if char == "\\" and index + 1 < end:
            escaped, index = _escape(pattern, index, in_class)
            out.append(escaped)
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
            if depth > MAX_PATTERN_NESTING:
                raise UnsupportedPattern(pattern, f"groups nest more than {MAX_PATTERN_NESTING} deep")
            lookaround = next((s for s in ("?=", "?!", "?<=", "?<!") if pattern.startswith(s, index + 1)), None)
            if lookaround is not None:
                raise UnsupportedPattern(
                    pattern, f"lookaround '({lookaround}' cannot run in linear time, so it is not supported"
                )
            if pattern.startswith("?<", index + 1):  # ECMA's named group, in the spelling every RE2 reads
                out.append("(?P<")
                index += 3
                continue
        elif char == ")":
            depth = max(depth - 1, 0)
        out.append(char)
        index += 1
    return "".join(out)


def _escape(pattern: str, index: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``pattern[index]`` (a backslash) in RE2's spelling, and the index after it."""
    kind = pattern[index + 1]
    if kind in "123456789" and not in_class:
        raise UnsupportedPattern(pattern, f"backreference '\\{kind}' cannot run in linear time, so it is not supported")
    if kind == "k" and pattern.startswith("<", index + 2):
        raise UnsupportedPattern(pattern, "named backreference '\\k<...>' cannot run in linear time")
    if kind == "u":
        code, after = _unicode_escape(pattern, index)
        if code is not None:
            return f"\\x{{{code:X}}}", after
    if kind == "c" and index + 2 < len(pattern) and pattern[index + 2].isascii() and pattern[index + 2].isalpha():
        return f"\\x{{{ord(pattern[index + 2]) % 32:X}}}", index + 3
    return pattern[index : index + 2], index + 2


def _unicode_escape(pattern: str, index: int) -> tuple[int | None, int]:
    r"""The code point of ``\uXXXX``, ``\u{X...}`` or a ``\uD8xx\uDCxx`` surrogate pair at ``index``."""
    if pattern.startswith("{", index + 2):
        close = pattern.find("}", index + 3)
        digits = pattern[index + 3 : close] if close > 0 else ""
        if digits and len(digits) <= 6 and set(digits) <= _HEX:
            return int(digits, 16), close + 1
        return None, index
    digits = pattern[index + 2 : index + 6]
    if len(digits) != 4 or not set(digits) <= _HEX:
        return None, index
    code = int(digits, 16)
    low = pattern[index + 8 : index + 12] if pattern.startswith("\\u", index + 6) else ""
    if 0xD800 <= code < 0xDC00 and len(low) == 4 and set(low) <= _HEX and 0xDC00 <= int(low, 16) < 0xE000:
        return 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00), index + 12
    return code, index + 6
