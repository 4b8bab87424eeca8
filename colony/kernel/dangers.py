"""Dangerous content anywhere in a plan: every string it holds, and shell text read the way a shell reads it.

The security vector must see ``rm -rf /`` however it is spelled (``r''m -rf /``, ``x=/; rm
-rf $x``, ``sh -c 'rm -rf /'``, ``echo ... | base64 -d | sh``), wherever it sits (a text
field, a value nested in the evidence, a JSON document inside a string). So the plan is
walked value by value (strings that hold JSON are parsed and walked too); each string is
matched against RE2 patterns (linear time, whatever the text) and read as shell by
:mod:`colony.kernel.shell_rules`. What the shell reading cannot judge is reported as a
doubt, never passed.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

import re2

from colony.kernel.shell_rules import RECURSIVE_ROOT_DELETE, judge

__all__ = ["DANGEROUS", "RECURSIVE_ROOT_DELETE", "find_danger", "recursive_root_delete", "scan_plan", "strings_in"]

# name -> (lower-case words one of which must appear, the pattern); the words keep the scan cheap
DANGEROUS = {
    "pipe a download into a shell": (("curl", "wget"), re2.compile(r"(curl|wget)[^|\n]*\|\s*(ba|z)?sh\b")),
    "world-writable permissions": (("chmod",), re2.compile(r"chmod\s+(-R\s+)?777")),
    "privilege escalation": (("sudo",), re2.compile(r"\bsudo\b")),
    "skipping verification hooks": (("--no-verify",), re2.compile(r"--no-verify\b")),
    "disabling a safety control": (
        ("disabl",),
        re2.compile(r"(?i)\bdisabl\w*\s+(auth\w*|tls|ssl|verification|2fa)\b"),
    ),
    "embedded AWS key": (("akia",), re2.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    "embedded secret": (
        ("pass", "api", "secret"),
        re2.compile(r"(?i)\b(password|passwd|api[_-]?key|secret)\s*[=:]\s*['\"]?[^\s'\"]{6,}"),
    ),
    "embedded private key": (("private key",), re2.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
}
MAX_NESTING = 4  # JSON inside a string inside JSON ...
REMEMBERED_TEXT = 2048  # characters: a text up to this long is judged once per process
Kind = Literal["danger", "doubt"]


def recursive_root_delete(text: str) -> bool:
    """Whether the shell text ``text`` runs ``rm`` recursively on ``/`` (also inside ``sh -c '...'``)."""
    return judge(text) == ("danger", RECURSIVE_ROOT_DELETE)


_JSON_STARTS = frozenset("[{ \t\r\n")


def _json_inside(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None


Where = tuple[Any, str | int] | None  # (parent, key or index): a path built only when it is shown


def _dotted(where: Where, root: str = "") -> str:
    parts: list[str] = []
    while where is not None:
        where, step = where
        parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
    return (root + "".join(reversed(parts))).lstrip(".")


def _walk(value: Any) -> list[tuple[Where, str]]:
    """Every string in ``value`` (values, keys, and JSON held in strings) with where it sits.

    A container's own strings come before those of the containers it holds, so a plan's
    text fields are read first. Iterative: nesting depth costs no recursion.
    """
    found: list[tuple[Where, str]] = []
    seen: dict[int, Any] = {}  # id -> the container, kept alive so no later object reuses its id
    stack: list[tuple[Where, Any, int]] = []
    if isinstance(value, str):
        found.append((None, value))
        value = _json_inside(value) if value[:1] in _JSON_STARTS else None
    if isinstance(value, dict | list):
        stack.append((None, value, 0))
    while stack:
        where, item, nesting = stack.pop()
        if id(item) in seen:
            continue
        seen[id(item)] = item
        if isinstance(item, dict):
            children: list[tuple[Where, Any]] = []
            for key, inner in item.items():
                name = str(key)
                keyed: Where = (where, name)
                found.append((keyed, name))
                children.append((keyed, inner))
        else:
            children = [((where, index), inner) for index, inner in enumerate(item)]
        pending: list[tuple[Where, Any, int]] = []
        for child, inner in children:
            if isinstance(inner, str):
                found.append((child, inner))
                if nesting < MAX_NESTING and inner[:1] in _JSON_STARTS:
                    parsed = _json_inside(inner)
                    if isinstance(parsed, dict | list):
                        pending.append((child, parsed, nesting + 1))
            elif isinstance(inner, dict | list):
                pending.append((child, inner, nesting))
        stack.extend(reversed(pending))
    return found


def strings_in(value: Any, path: str) -> list[tuple[str, str]]:
    """Every string in ``value`` with its dotted path under ``path``: values, keys, and JSON held in strings."""
    return [(_dotted(where, path), text) for where, text in _walk(value)]


def _danger_in(text: str) -> tuple[Kind, str] | None:
    """What ``text`` holds; a short text is judged once (an agent's keys and phrases recur call after call)."""
    return _remembered(text) if len(text) <= REMEMBERED_TEXT else _judged(text)


def _judged(text: str) -> tuple[Kind, str] | None:
    lowered = text.lower()
    for name, (words, pattern) in DANGEROUS.items():
        if any(word in lowered for word in words) and pattern.search(text):
            return "danger", name
    return judge(text)


_remembered = functools.lru_cache(maxsize=4096)(_judged)  # at most 4096 texts of 2 KiB


def find_danger(plan: dict[str, Any], first: tuple[str, ...]) -> tuple[str, str] | None:
    """The first (field path, danger name) of a certain danger in ``plan``; see :func:`scan_plan`."""
    found = scan_plan(plan, first)
    return None if found is None or found[2] == "doubt" else (found[0], found[1])


def scan_plan(plan: dict[str, Any], first: tuple[str, ...]) -> tuple[str, str, Kind] | None:
    """The first (field path, danger name, kind) in ``plan``: a certain danger before any doubt.

    Strings are read in order: the ``first`` keys, then the evidence, then the rest.
    """
    order = [key for key in first if key in plan]
    order += ["evidence"] if "evidence" in plan and "evidence" not in order else []
    order += [key for key in plan if key not in order]
    doubt: tuple[str, str, Kind] | None = None
    scanned: set[str] = set()  # a proposal's evidence keys are also plan keys: scan each text once
    for where, text in _walk({key: plan[key] for key in order}):
        if text in scanned:
            continue
        scanned.add(text)
        found = _danger_in(text)
        if found is None:
            continue
        if found[0] == "danger":
            return _dotted(where), found[1], "danger"
        doubt = doubt or (_dotted(where), found[1], "doubt")
    return doubt
