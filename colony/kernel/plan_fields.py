"""The plan fields the falsification worker reads, each with its declared type.

A value of the wrong type is an input error naming the field, never evidence: ``"tests":
"t"`` is not test coverage and ``"imports": "pkg"`` is not an import list. ``null`` counts
as absent for the remediation fields (the text fields, when present, must be strings).
Fields the worker does not read are not checked (a plan may carry anything).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from typing import Any

from colony.errors import FieldError, KernelInputError

__all__ = ["REMEDIATION_FIELDS", "STRING_FIELDS", "check_plan_fields"]


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else "a string"


def _names(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value)
    return None if ok else "a list of non-empty strings"


def _pins(value: Any) -> str | None:
    ok = isinstance(value, dict) and all(isinstance(version, str) for version in value.values())
    return None if ok else 'an object mapping each package to a version string, e.g. {"httpx": "==0.27.2"}'


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _one_of(*kinds: type, words: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if isinstance(value, kinds) and not isinstance(value, bool) else words

    return check


STRING_FIELDS = ("action_type", "target", "rationale", "rollback_plan", "agent_id")
REMEDIATION_FIELDS: dict[str, Callable[[Any], str | None]] = {
    "tests": _names,
    "scope": _names,
    "imports": _names,
    "callers": _names,
    "dependencies": _pins,
    "owner": _text,
    "security_review": _one_of(str, dict, words="a string or an object saying who reviewed what"),
    "metrics": _one_of(dict, list, words="an object or a list of before/after figures"),
    "benchmark": _one_of(str, dict, list, words="a string, an object or a list describing the measurement"),
    "sandbox": _flag,
}


_ALL_FIELDS = {**dict.fromkeys(STRING_FIELDS, _text), **REMEDIATION_FIELDS}


def check_plan_fields(plan: Mapping[str, Any], prefix: str = "", *, strings: bool = True) -> None:
    """Raise KernelInputError naming every read field of ``plan`` whose value has the wrong type.

    Args:
        plan: The plan (or a proposal's evidence, whose keys count as plan keys).
        prefix: Put before each field name in the error (``"plan_json."``, ``"evidence."``).
        strings: Also check the text fields (``action_type``, ``target``, ...).
    """
    checks = _ALL_FIELDS if strings else REMEDIATION_FIELDS
    problems = []
    for name, check in checks.items():
        if name not in plan or (plan[name] is None and name in REMEDIATION_FIELDS):
            continue
        value = plan[name]
        expected = check(value)
        if expected is not None:
            message = f"{type(value).__name__} given ({reprlib.repr(value)})"
            problems.append(FieldError(field=f"{prefix}{name}", message=message, expected=expected))
    if problems:
        summary = "; ".join(f"{p.field}: {p.message}, expected {p.expected}" for p in problems)
        raise KernelInputError(f"invalid plan: {summary}", errors=problems)
