"""How the kernel classifies an action type: read-only, mutating, or destructive.

The gate and the falsification worker share this so they never disagree. The verb is the
action type's first word (``delete_file`` -> ``delete``); a caller that knows better passes
``side_effecting`` explicitly on its proposal.
"""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["VERB_SEPARATOR", "ActionKind", "classify_action"]

VERB_SEPARATOR = re.compile(r"[_\-.\s]")

READ_ONLY_VERBS = frozenset(
    {
        "analyse",
        "analyze",
        "check",
        "describe",
        "diff",
        "explain",
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
        "status",
        "view",
    }
)
READ_ONLY_ACTIONS = frozenset({"run_tests", "run_linter", "dry_run"})
DESTRUCTIVE_VERBS = frozenset(
    {
        "archive",
        "delete",
        "destroy",
        "drop",
        "prune",
        "purge",
        "remove",
        "revoke",
        "rm",
        "truncate",
        "uninstall",
        "wipe",
    }
)
DESTRUCTIVE_ACTIONS = frozenset({"force_push", "reset_hard", "hard_reset"})


class ActionKind(StrEnum):
    """What an action does to the world."""

    READ_ONLY = "read_only"
    MUTATING = "mutating"
    DESTRUCTIVE = "destructive"

    @property
    def side_effecting(self) -> bool:
        """Whether the action writes anything."""
        return self is not ActionKind.READ_ONLY


def classify_action(action_type: str) -> ActionKind:
    """Classify ``action_type`` by its verb (its first ``_``/``-``/``.``-separated word)."""
    name = action_type.strip().lower()
    verb = VERB_SEPARATOR.split(name, maxsplit=1)[0]
    if name in DESTRUCTIVE_ACTIONS or verb in DESTRUCTIVE_VERBS:
        return ActionKind.DESTRUCTIVE
    if name in READ_ONLY_ACTIONS or verb in READ_ONLY_VERBS:
        return ActionKind.READ_ONLY
    return ActionKind.MUTATING
