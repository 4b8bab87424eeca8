"""A loaded policy set, indexed so a call evaluates only the policies that can apply to it.

Policies are grouped by the action their scope names (a policy with ``action`` unconstrained
applies to every action). For each action the applicable policies are parsed into one Cedar
policy set once. An action whose applicable policies cannot deny or hold (no forbid, no
``@hold``, an unconditional permit) is decided without calling Cedar; otherwise the decision
of an identical request (the same principal, tool, arguments, minute and estimate) under the
same policy set is kept in a bounded cache, since Cedar evaluation is a pure function of them.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, fields, is_dataclass

import cedarpy
from cedarpy import pst

from colony.policy.decision import Effect, PolicyDecision
from colony.policy.request import CONTEXT_ATTRIBUTES, CedarCall, Who
from colony.policy.source import PolicySource

__all__ = ["PolicyIndex", "reads_variable"]

_CACHE_SIZE = 4096
_ENTITIES_SIZE = 256
_ERRORED = re.compile(r"`([^`]+)`")


@dataclass
class _ActionSet:
    """The policies that can apply to one action: their Cedar set, or a decision that needs none."""

    sources: tuple[PolicySource, ...]
    cedar: cedarpy.PolicySet | None
    fixed: PolicyDecision | None
    reads: frozenset[str]  # the context attributes these policies read


class PolicyIndex:
    """The policies of one generation, by action; ``decide`` is safe from any thread."""

    def __init__(
        self, sources: Iterable[PolicySource], generation: int = 0, *, dormant: Iterable[PolicySource] = ()
    ) -> None:
        self.generation = generation
        self.dormant = tuple(dormant)  # policies naming only tools this catalog does not serve
        self.sources = {source.id: source for source in sources}
        self._any: list[PolicySource] = []
        self._named: dict[str, list[PolicySource]] = {}
        for source in self.sources.values():
            scope = source.policy.action
            if isinstance(scope, pst.ActionEq):
                self._named.setdefault(scope.entity.id, []).append(source)
            elif isinstance(scope, pst.ActionIn):
                for entity in scope.entities:
                    self._named.setdefault(entity.id, []).append(source)
            else:
                self._any.append(source)
        self._sets: dict[str, _ActionSet] = {}
        self._cache: OrderedDict[str, PolicyDecision] = OrderedDict()
        self._entities: OrderedDict[str, cedarpy.Entities] = OrderedDict()
        self._entity_text: dict[tuple[Who, str], str] = {}
        self._calls: dict[Hashable, PolicyDecision] = {}
        self._lock = threading.Lock()
        #: Which principal attributes the kernel must be asked for (role, trust), read from the policies.
        self.principal_reads = reads_variable((source.policy for source in self.sources.values()), "principal")

    def applicable(self, action: str) -> tuple[PolicySource, ...]:
        """The policies whose action scope admits ``action``, in load order."""
        return self._set(action).sources

    def fixed(self, action: str) -> PolicyDecision | None:
        """The decision for every call of ``action`` when no condition can change it, else None."""
        return self._set(action).fixed

    def reads(self, action: str) -> frozenset[str]:
        """The context attributes the policies that can apply to ``action`` read (the rest need not be built)."""
        return self._set(action).reads

    def recall(self, key: Hashable) -> PolicyDecision | None:
        """A decision ``remember`` kept for a call described by ``key`` under this policy set."""
        return self._calls.get(key)

    def remember(self, key: Hashable, decision: PolicyDecision) -> None:
        """Keep ``decision`` for ``key``: everything its request was built from (bounded; the oldest go first)."""
        with self._lock:
            if len(self._calls) >= _CACHE_SIZE:
                self._calls.pop(next(iter(self._calls)), None)
            self._calls[key] = decision

    def decide(self, call: CedarCall) -> PolicyDecision:
        """Evaluate ``call`` against the policies of its action."""
        entry = self._set(call.action)
        if entry.fixed is not None:
            return entry.fixed
        assert entry.cedar is not None
        # The request is built in a fixed order, so equal requests encode equally (a reordering only misses).
        entities = self._entity_text.get((call.who, call.action))
        if entities is None:  # the same principal calling the same action again: encoded once per policy set
            entities = json.dumps(call.entities(), separators=(",", ":"))
            if len(self._entity_text) >= _ENTITIES_SIZE:
                self._entity_text.clear()
            self._entity_text[(call.who, call.action)] = entities
        context = json.dumps(call.context, separators=(",", ":"))
        key = f"{call.action}\0{entities}\0{context}"
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            parsed = self._entities.get(entities)
        if parsed is None:
            parsed = cedarpy.Entities.from_json_str(entities)
        result = cedarpy.is_authorized({**call.request(), "context": context}, entry.cedar, parsed)
        decision = self._interpret(result, entry.sources)
        with self._lock:
            self._cache[key] = decision
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
            self._entities[entities] = parsed  # the same principal and tool again: parsed once
            if len(self._entities) > _ENTITIES_SIZE:
                self._entities.popitem(last=False)
        return decision

    def _interpret(self, result: cedarpy.AuthzResult, applicable: tuple[PolicySource, ...]) -> PolicyDecision:
        satisfied = [self.sources[policy_id] for policy_id in result.diagnostics.reasons if policy_id in self.sources]
        errored = {name for error in result.diagnostics.errors for name in _ERRORED.findall(str(error))}
        failed = [source for source in applicable if source.id in errored and (source.forbids or source.hold)]
        if failed:  # a forbid or a hold that could not be evaluated counts as matched: fail closed
            return PolicyDecision(
                Effect.FORBID,
                tuple(source.id for source in failed),
                tuple(f"the policy could not be evaluated for this call ({source.where})" for source in failed),
            )
        if not result.allowed:
            forbids = [source for source in satisfied if source.forbids]
            return PolicyDecision(
                Effect.FORBID, tuple(source.id for source in forbids), tuple(source.reason for source in forbids)
            )
        holds = [source for source in satisfied if source.hold is not None]
        if holds:
            return PolicyDecision(
                Effect.HOLD, tuple(source.id for source in holds), tuple(source.hold or "" for source in holds)
            )
        return PolicyDecision(Effect.PERMIT, tuple(source.id for source in satisfied))

    def _set(self, action: str) -> _ActionSet:
        entry = self._sets.get(action)
        if entry is None:
            named = {source.id for source in (*self._any, *self._named.get(action, ()))}
            sources = tuple(source for source in self.sources.values() if source.id in named)
            fixed = _fixed(sources)
            cedar = None
            if fixed is None:
                policies = {source.id: source.policy for source in sources}
                cedar = cedarpy.PolicySet.from_pst(
                    pst.PolicySet(templates={}, static_policies=policies, template_links=())
                )
            reads = reads_variable((source.policy for source in sources), "context", CONTEXT_ATTRIBUTES)
            entry = self._sets[action] = _ActionSet(sources, cedar, fixed, reads)
        return entry


def _fixed(sources: tuple[PolicySource, ...]) -> PolicyDecision | None:
    """The decision when no request can change it: nothing can deny or hold and something always permits."""
    if not sources:
        return PolicyDecision(Effect.FORBID, (), ())
    if any(source.forbids or source.hold is not None for source in sources):
        return None
    always = [source for source in sources if _unconditional(source.policy)]
    return PolicyDecision(Effect.PERMIT, (always[0].id,)) if always else None


def _unconditional(policy: pst.Template) -> bool:
    return (
        isinstance(policy.principal, pst.ScopeAny) and isinstance(policy.resource, pst.ScopeAny) and not policy.clauses
    )


def reads_variable(
    policies: Iterable[pst.Template], variable: str, every: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The attributes of ``variable`` the policies read (``principal.role`` -> ``role``).

    A policy that uses the variable otherwise than through one attribute (``context == {...}``)
    reads all of them: ``every`` (when given; ``principal in Group::"g"`` reads no attribute).
    """
    found: set[str] = set()
    stack: list[object] = [policy.clauses for policy in policies]
    while stack:
        node = stack.pop()
        if isinstance(node, pst.GetAttr | pst.HasAttr) and isinstance(node.base, pst.Var):
            if node.base.name == variable:
                found.add(node.attr if isinstance(node, pst.GetAttr) else node.attrs[0])
            continue
        if isinstance(node, pst.Var) and node.name == variable and every:
            return every
        if isinstance(node, tuple | list):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, field.name) for field in fields(node))
    return frozenset(found)
