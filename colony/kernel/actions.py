"""How the kernel classifies an action type: read-only, mutating, or destructive.

The gate and the falsification worker share this so they never disagree. A name is
split into word segments (on ``_``, ``-``, ``.``, spaces and camelCase humps) and judged
by one explicit table, in this order:

1. **destructive** if any segment is a destructive word (``drop``, ``delete``,
   ``truncate``, ``rm``, ``overwrite``, ...) or the name holds a destructive pair
   (``force push``, ``reset hard``): ``query_and_drop_table`` is destructive;
2. **read-only** if the whole name is a known read-only action (``run_tests``), or its
   first segment is a read-only verb (``get``, ``list``, ``query``, ...) and no segment is
   a write word (``set``, ``update``, ``write``, ...);
3. **mutating** otherwise: an unknown name is a write.

A caller may only raise the kind (:func:`resolve_kind`), never lower it.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from itertools import pairwise

__all__ = [
    "DESTRUCTIVE_WORDS",
    "READ_ONLY_ACTIONS",
    "READ_ONLY_VERBS",
    "WRITE_WORDS",
    "ActionKind",
    "classify_action",
    "resolve_kind",
    "segments",
]

_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATOR = re.compile(r"[_\-.\s]+")

DESTRUCTIVE_WORDS = frozenset(
    {
        "archive",
        "delete",
        "destroy",
        "drop",
        "erase",
        "overwrite",
        "prune",
        "purge",
        "remove",
        "revoke",
        "rm",
        "rmdir",
        "shred",
        "truncate",
        "uninstall",
        "unlink",
        "wipe",
    }
)
DESTRUCTIVE_PAIRS = frozenset({("force", "push"), ("reset", "hard"), ("hard", "reset")})
READ_ONLY_VERBS = frozenset(
    {
        "analyse",
        "analyze",
        "check",
        "count",
        "describe",
        "diff",
        "explain",
        "find",
        "get",
        "inspect",
        "lint",
        "list",
        "profile",
        "query",
        "read",
        "review",
        "search",
        "sense",
        "show",
        "status",
        "validate",
        "view",
    }
)
READ_ONLY_ACTIONS = frozenset({"run_tests", "run_linter", "dry_run"})
WRITE_WORDS = frozenset(
    {
        "add",
        "append",
        "apply",
        "change",
        "commit",
        "copy",
        "cp",
        "create",
        "deploy",
        "edit",
        "exec",
        "execute",
        "insert",
        "install",
        "merge",
        "modify",
        "move",
        "mv",
        "patch",
        "post",
        "publish",
        "push",
        "put",
        "rename",
        "replace",
        "reset",
        "restore",
        "run",
        "save",
        "send",
        "set",
        "submit",
        "sync",
        "update",
        "upgrade",
        "upload",
        "write",
    }
)


class ActionKind(StrEnum):
    """What an action does to the world, from least to most harmful."""

    READ_ONLY = "read_only"
    MUTATING = "mutating"
    DESTRUCTIVE = "destructive"

    @property
    def side_effecting(self) -> bool:
        """Whether the action writes anything."""
        return self is not ActionKind.READ_ONLY

    @property
    def rank(self) -> int:
        """0 read-only, 1 mutating, 2 destructive: a kind may only move up this scale."""
        return _RANK[self]


_RANK = {ActionKind.READ_ONLY: 0, ActionKind.MUTATING: 1, ActionKind.DESTRUCTIVE: 2}


@lru_cache(maxsize=4096)
def segments(action_type: str) -> tuple[str, ...]:
    """The name's lower-case word segments: ``queryAndDrop-table`` -> ``('query', 'and', 'drop', 'table')``."""
    return tuple(part for part in _SEPARATOR.split(_CAMEL_HUMP.sub("_", action_type).lower()) if part)


@lru_cache(maxsize=4096)  # a colony proposes the same few action types over and over
def classify_action(action_type: str) -> ActionKind:
    """Classify ``action_type`` by the table in this module's docstring."""
    words = segments(action_type)
    if any(word in DESTRUCTIVE_WORDS for word in words) or any(pair in DESTRUCTIVE_PAIRS for pair in pairwise(words)):
        return ActionKind.DESTRUCTIVE
    if "_".join(words) in READ_ONLY_ACTIONS:
        return ActionKind.READ_ONLY
    if words and words[0] in READ_ONLY_VERBS and not any(word in WRITE_WORDS for word in words):
        return ActionKind.READ_ONLY
    return ActionKind.MUTATING


def resolve_kind(
    action_type: str, *, side_effecting: bool | None = None, declared: ActionKind | None = None
) -> ActionKind:
    """The kind the gate judges: the name's, raised (never lowered) by what the caller says.

    ``side_effecting=True`` makes a read-only name mutating; ``False`` changes nothing.
    ``declared`` (a tool's kind from its catalog spec) counts only when it is higher.
    """
    kind = classify_action(action_type)
    if side_effecting and kind is ActionKind.READ_ONLY:
        kind = ActionKind.MUTATING
    if declared is not None and declared.rank > kind.rank:
        kind = declared
    return kind
