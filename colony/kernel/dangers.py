"""Dangerous content anywhere in a plan: every string it holds, and shell text read the way a shell reads it.

The security vector must see ``rm -rf /`` however it is spelled (``rm -fr /``, ``rm -r -f
/``, ``rm -rf "/"``, ``rm --recursive --force /``, ``sh -c 'rm -rf /'``), wherever it sits
(a text field, a value nested in the evidence, a JSON document inside a string). So the
plan is walked value by value (strings that hold JSON are parsed and walked too), and a
string that mentions ``rm`` is split into commands and words by :mod:`shlex`, a real
shell lexer, instead of matching a regex over escaped JSON text.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import Any

__all__ = ["DANGEROUS", "find_danger", "recursive_root_delete", "strings_in"]

RECURSIVE_ROOT_DELETE = "recursive delete of /"
# name -> (lower-case words one of which must appear, the pattern); the words keep the scan cheap
DANGEROUS = {
    "pipe a download into a shell": (("curl", "wget"), re.compile(r"(curl|wget)[^|\n]*\|\s*(ba|z)?sh\b")),
    "world-writable permissions": (("chmod",), re.compile(r"chmod\s+(-R\s+)?777")),
    "privilege escalation": (("sudo",), re.compile(r"\bsudo\b")),
    "skipping verification hooks": (("--no-verify",), re.compile(r"--no-verify\b")),
    "disabling a safety control": (
        ("disabl",),
        re.compile(r"(?i)\bdisabl\w*\s+(auth\w*|tls|ssl|verification|2fa)\b"),
    ),
    "embedded AWS key": (("akia",), re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    "embedded secret": (
        ("pass", "api", "secret"),
        re.compile(r"(?i)\b(password|passwd|api[_-]?key|secret)\s*[=:]\s*['\"]?[^\s'\"]{6,}"),
    ),
    "embedded private key": (("private key",), re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
}
_DANGER_WORDS = tuple(word for words, _ in DANGEROUS.values() for word in words)
MAX_NESTING = 4  # JSON inside a string inside JSON ..., and `sh -c '...'` inside a command
_MENTIONS_RM = re.compile(r"(?<![\w-])rm(?![\w-])")  # a word `rm`, also /bin/rm, \rm, `rm
_SEPARATORS = frozenset({";", "&", "&&", "|", "||", "|&", ";;", "(", ")", "`", "\n"})
_PUNCTUATION = ";&|()<>`\n"
_RECURSIVE_LONG = frozenset({"--recursive", "--no-preserve-root"})


def _words(text: str) -> list[str]:
    """Shell words and separators; unbalanced quotes are read again with the quotes dropped."""
    text = text.replace("\\\n", " ")  # a line continuation joins the lines, as in a shell
    for attempt in (text, re.sub(r"[\"'\\]", " ", text)):
        lexer = shlex.shlex(attempt, posix=True, punctuation_chars=_PUNCTUATION)
        lexer.whitespace = " \t\r"  # a newline ends a command: keep it as a separator
        lexer.whitespace_split = True
        try:
            return list(lexer)
        except ValueError:  # no closing quotation, or a trailing escape
            continue
    return attempt.split()


def _is_root(operand: str) -> bool:
    if not operand.startswith("/"):
        return False
    return posixpath.normpath(operand).lstrip("/") in ("", "*", ".*")


def _deletes_root(arguments: list[str]) -> bool:
    """Whether ``rm``'s ``arguments`` (up to the end of its command) delete ``/`` recursively."""
    recursive, root, options = False, False, True
    for word in arguments:
        if options and word == "--":
            options = False
        elif options and word.startswith("--"):
            recursive = recursive or word in _RECURSIVE_LONG or word.startswith("--recursive")
            root = root or word == "--no-preserve-root"
        elif options and word.startswith("-") and len(word) > 1:
            recursive = recursive or "r" in word or "R" in word
        else:
            root = root or _is_root(word)
    return recursive and root


def recursive_root_delete(text: str, depth: int = 0) -> bool:
    """Whether the shell text ``text`` runs ``rm`` recursively on ``/`` (also inside ``sh -c '...'``)."""
    if "rm" not in text or not _MENTIONS_RM.search(text):
        return False
    words = _words(text)
    command: list[str] = []
    for word in [*words, "\n"]:
        if word not in _SEPARATORS:
            command.append(word)
            continue
        for index, name in enumerate(command):
            if name.rsplit("/", 1)[-1] == "rm" and _deletes_root(command[index + 1 :]):
                return True
        command = []
    if depth < MAX_NESTING:  # a quoted word may itself be a script: sh -c 'rm -rf /'
        return any(recursive_root_delete(word, depth + 1) for word in words if " " in word or "\n" in word)
    return False


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


def _danger_in(text: str, names: list[str], rm: bool) -> str | None:
    if rm and recursive_root_delete(text):
        return RECURSIVE_ROOT_DELETE
    lowered = text.lower()
    for name in names:
        words, pattern = DANGEROUS[name]
        if any(word in lowered for word in words) and pattern.search(text):
            return name
    return None


def find_danger(plan: dict[str, Any], first: tuple[str, ...]) -> tuple[str, str] | None:
    """The first (field path, danger name) in ``plan``: the ``first`` keys, then the evidence, then the rest."""
    order = [key for key in first if key in plan]
    order += ["evidence"] if "evidence" in plan and "evidence" not in order else []
    order += [key for key in plan if key not in order]
    texts = _walk({key: plan[key] for key in order})
    # One cheap look at everything first: most plans mention none of the words, and stop here.
    everything = "\n".join(text for _, text in texts)
    lowered = everything.lower()
    rm = "rm" in everything and _MENTIONS_RM.search(everything) is not None
    if not rm and not any(word in lowered for word in _DANGER_WORDS):
        return None
    names = [name for name, (words, _) in DANGEROUS.items() if any(word in lowered for word in words)]
    scanned: set[str] = set()  # a proposal's evidence keys are also plan keys: scan each text once
    for where, text in texts:
        if text in scanned:
            continue
        scanned.add(text)
        name = _danger_in(text, names, rm)
        if name is not None:
            return _dotted(where), name
    return None
