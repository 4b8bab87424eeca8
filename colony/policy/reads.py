"""What policies read: the attributes of the principal and the paths into the context.

A call shows Cedar only what its applicable policies can read: a value no policy reaches cannot
change a decision, and every attribute left out is one Cedar need not parse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from cedarpy import pst

__all__ = ["Paths", "chain", "children", "context_paths", "prune", "reads_variable"]

#: The paths the policies read into a record: each attribute read, with the paths read into it,
#: or None when its whole value is read. None for the whole record.
Paths = Mapping[str, "Paths | None"]


def reads_variable(
    policies: Iterable[pst.Template], variable: str, every: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The attributes of ``variable`` the policies read (``principal.role`` -> ``role``).

    A policy that uses the variable otherwise than through one attribute (``context == {...}``)
    reads all of them: ``every`` (when given; ``principal in Group::"g"`` reads no attribute).
    """
    paths = _paths(policies, variable, bare_reads_all=bool(every))
    return every if paths is None else frozenset(paths)


def context_paths(policies: Iterable[pst.Template]) -> Paths | None:
    """The paths the policies read into ``context`` (None: the whole context)."""
    return _paths(policies, "context", bare_reads_all=True)


def prune(value: Any, paths: Paths | None) -> Any:
    """``value`` with only what ``paths`` reach (a record's other attributes left out)."""
    if paths is None or type(value) is not dict:
        return value
    kept = {}
    for name, inner in paths.items():
        if name in value:
            item = value[name]
            kept[name] = item if inner is None else prune(item, inner)
    return kept


def _paths(policies: Iterable[pst.Template], variable: str, *, bare_reads_all: bool) -> dict[str, Any] | None:
    found: dict[str, Any] = {}
    stack: list[object] = [policy.clauses for policy in policies]
    while stack:
        node = stack.pop()
        if isinstance(node, pst.GetAttr | pst.HasAttr):
            root, path = chain(node)
            if isinstance(root, pst.Var) and root.name == variable:
                _add(found, path, whole=isinstance(node, pst.GetAttr))
            else:
                stack.append(root)
            continue
        if isinstance(node, pst.Var) and node.name == variable and bare_reads_all:
            return None  # the variable itself, not one of its attributes: all of it
        stack.extend(children(node))
    return found


def children(node: object) -> list[object]:
    """The nodes directly under ``node`` of a parsed policy (its fields, items or values)."""
    if isinstance(node, tuple | list):
        return list(node)
    if isinstance(node, dict):
        return list(node.values())
    if is_dataclass(node) and not isinstance(node, type):
        return [getattr(node, field.name) for field in fields(node)]
    return []


def chain(node: pst.GetAttr | pst.HasAttr) -> tuple[object, tuple[str, ...]]:
    """The expression under a chain of attribute reads, and the path they read (outermost last)."""
    path: list[str] = list(reversed(node.attrs)) if isinstance(node, pst.HasAttr) else [node.attr]
    base: object = node.base
    while isinstance(base, pst.GetAttr):
        path.append(base.attr)
        base = base.base
    return base, tuple(reversed(path))


def _add(tree: dict[str, Any], path: tuple[str, ...], *, whole: bool) -> None:
    """Add ``path``: its value read ``whole``, or only whether it is there (``has``: an empty record will do)."""
    for name in path[:-1]:
        if name in tree and tree[name] is None:
            return  # already read whole
        tree = tree.setdefault(name, {})
    last = path[-1]
    if whole:
        tree[last] = None
    elif last not in tree:
        tree[last] = {}
