"""The bounded, redacted copy of a call's arguments or result a span may carry (off by default)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["redacted"]

_SECRET_NAME = re.compile(r"(pass(word|wd)?|secret|token|key|auth|credential|cookie|session|private)", re.I)
_REDACTED = "[redacted]"


def redacted(value: Any, limit: int) -> str:
    """``value`` as JSON, every secret-looking field's value replaced, cut to ``limit`` characters."""
    text = json.dumps(_scrub(value), default=str, sort_keys=True)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _REDACTED if _SECRET_NAME.search(str(key)) else _scrub(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(item) for item in value]
    return value
