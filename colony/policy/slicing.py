"""Which policies cannot apply to a call, decided before Cedar sees it (policy slicing).

A policy is left out only when it provably cannot match: its principal or resource scope
cannot admit the caller or the tool, or a condition it checks first reads only the tool (a
tag rule on another tool's tags) and Cedar finds it false for this tool. Leaving such a
policy out changes no decision; it spares Cedar the work, and a call none of whose policies
can deny is answered without Cedar at all.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import cedarpy
from cedarpy import pst

from colony.policy.decision import errored_policies
from colony.policy.reads import chain, children
from colony.policy.request import Who, compact_json, tool_entity
from colony.policy.source import PolicySource, policy_set

__all__ = ["ToolSlicer", "admits_principal", "admits_resource", "tool_state"]

_TOOLS_SIZE = 1024


def tool_state(attributes: Mapping[str, Any]) -> Hashable:
    """A tool's attributes as a hashable key: what its entity is made of."""
    return tuple([(name, tuple(value) if type(value) is list else value) for name, value in attributes.items()])


def _is(entity: object, kind: str, entity_id: str | None = None) -> bool:
    """Whether ``entity`` is an uid (not a slot) of ``kind`` (and ``entity_id`` when given)."""
    return (
        isinstance(entity, pst.EntityUid)
        and not entity.type.namespace
        and entity.type.basename == kind
        and (entity_id is None or entity.id == entity_id)
    )


def _other_type(scope: pst.ScopeIs | pst.ScopeIsIn, kind: str) -> bool:
    return bool(scope.entity_type.namespace) or scope.entity_type.basename != kind


def admits_principal(scope: pst.PrincipalOrResourceConstraint, who: Who) -> bool:
    """False only when no request of ``who`` can match ``scope`` (an Agent, in its groups, which have none)."""
    if isinstance(scope, pst.ScopeIs | pst.ScopeIsIn) and _other_type(scope, "Agent"):
        return False
    if isinstance(scope, pst.ScopeEq):
        return not isinstance(scope.entity, pst.EntityUid) or _is(scope.entity, "Agent", who.agent_id)
    if isinstance(scope, pst.ScopeIn | pst.ScopeIsIn):
        entity = scope.entity
        if not isinstance(entity, pst.EntityUid):
            return True
        return _is(entity, "Agent", who.agent_id) or (_is(entity, "Group") and entity.id in who.groups)
    return True


def admits_resource(scope: pst.PrincipalOrResourceConstraint, tool: str) -> bool:
    """False only when ``scope`` cannot match the Tool ``tool`` (tools have no parents)."""
    if isinstance(scope, pst.ScopeIs | pst.ScopeIsIn) and _other_type(scope, "Tool"):
        return False
    if isinstance(scope, pst.ScopeEq | pst.ScopeIn | pst.ScopeIsIn):
        return not isinstance(scope.entity, pst.EntityUid) or _is(scope.entity, "Tool", tool)
    return True


class ToolSlicer:
    """The policies whose leading conditions read only the tool, and which of them a given tool fails.

    Each such policy's leading tool-only conditions become one permit of a probe set; Cedar
    evaluates the probe once per tool state (its name and attributes), against that tool alone.
    A policy whose probe is not satisfied, and did not fail to evaluate, cannot match a call of
    that tool: Cedar checks a policy's conditions in order and stops at the first false one.
    """

    def __init__(self, sources: Iterable[PolicySource]) -> None:
        probes = {source.id: _probe(source.policy) for source in sources}
        self._probes = {policy_id: probe for policy_id, probe in probes.items() if probe is not None}
        self._set = policy_set(self._probes) if self._probes else None
        self._excluded: dict[tuple[str, Hashable], frozenset[str]] = {}
        self._lock = threading.Lock()

    def excluded(self, tool: str, attributes: Mapping[str, Any], state: Hashable) -> frozenset[str]:
        """The ids of the policies that cannot match a call of ``tool`` with these attributes (their tool_state)."""
        if self._set is None:
            return frozenset()
        key = (tool, state)
        found = self._excluded.get(key)
        if found is None:
            result = cedarpy.is_authorized(
                {
                    "principal": {"type": "Agent", "id": ""},
                    "action": {"type": "Action", "id": ""},
                    "resource": {"type": "Tool", "id": tool},
                    "context": "{}",
                },
                self._set,
                compact_json([tool_entity(tool, attributes)]),
            )
            kept = set(result.diagnostics.reasons) | errored_policies(result.diagnostics.errors)  # errors: fail closed
            found = frozenset(policy_id for policy_id in self._probes if policy_id not in kept)
            with self._lock:
                if len(self._excluded) >= _TOOLS_SIZE:
                    self._excluded.clear()
                self._excluded[key] = found
        return found


def _probe(policy: pst.Template) -> pst.Template | None:
    """A permit of the policy's leading tool-only conditions, or None when its first condition reads more."""
    leading: list[Any] = []
    for clause in policy.clauses:
        if not isinstance(clause, pst.When):
            break
        conjuncts = _conjuncts(clause.expr)
        for conjunct in conjuncts:
            if not _reads_only_the_tool(conjunct):
                break
            leading.append(conjunct)
        else:
            continue
        break
    if not leading:
        return None
    condition = leading[0]
    for conjunct in leading[1:]:
        condition = pst.BinaryOp(op="and", left=condition, right=conjunct)
    return pst.Template(
        id=policy.id,
        effect="permit",
        principal=pst.ScopeAny(),
        action=pst.ScopeAny(),
        resource=pst.ScopeAny(),
        clauses=(pst.When(expr=condition),),
        annotations={},
    )


def _conjuncts(expr: Any) -> list[Any]:
    """``a && b && c`` as ``[a, b, c]``, in the order Cedar evaluates them."""
    if isinstance(expr, pst.BinaryOp) and expr.op == "and":
        return [*_conjuncts(expr.left), *_conjuncts(expr.right)]
    return [expr]


def _reads_only_the_tool(expr: Any) -> bool:
    """Whether ``expr`` reads the resource and nothing else: no other variable, slot or entity's data."""
    reads_resource = False
    stack: list[object] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, pst.GetAttr | pst.HasAttr):
            root, _ = chain(node)
            if not (isinstance(root, pst.Var) and root.name == "resource"):
                return False
            reads_resource = True
            continue
        if isinstance(node, pst.Var):
            if node.name != "resource":
                return False
            reads_resource = True
        elif isinstance(node, pst.Slot):
            return False
        elif isinstance(node, pst.BinaryOp) and node.op in ("in", "get_tag", "has_tag"):
            return False  # membership and tags read the entity graph: left to Cedar with all of it
        else:
            stack.extend(children(node))
    return reads_resource
