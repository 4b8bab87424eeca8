"""A loaded policy set, indexed so a call evaluates only the policies that can apply to it.

Policies are grouped by the action their scope names (a policy with ``action`` unconstrained
applies to every action), then, per caller and tool state, without those that provably cannot
match (colony.policy.slicing); each group is parsed into one Cedar policy set once. A group
that cannot deny or hold (no forbid, no ``@hold``, an unconditional permit) is decided without
calling Cedar. Otherwise Cedar is shown only the context paths the group's policies read, and
the decision of an identical request under the same policy set is kept in a bounded cache,
since Cedar evaluation is a pure function of it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import cached_property

import cedarpy
from cedarpy import pst

from colony.policy.decision import Effect, PolicyDecision, errored_policies
from colony.policy.reads import Paths, context_paths, prune, reads_variable
from colony.policy.request import CONTEXT_ATTRIBUTES, CedarCall, Who, compact_json
from colony.policy.slicing import ToolSlicer, admits_principal, admits_resource, tool_state
from colony.policy.source import PolicySource, policy_set

__all__ = ["PolicyIndex", "scoped_tools"]


def scoped_tools(source: PolicySource) -> list[str]:
    """The tools a policy's action scope names (``<tool>.<action>`` ids); empty when it names none."""
    scope = source.policy.action
    if isinstance(scope, pst.ActionEq):
        return [scope.entity.id.partition(".")[0]]
    if isinstance(scope, pst.ActionIn):
        return [entity.id.partition(".")[0] for entity in scope.entities]
    return []


_CACHE_SIZE = 4096
_ENTITIES_SIZE = 256
_CALLERS_SIZE = 1024


@dataclass
class _ActionSet:
    """The policies that can apply to one action: their Cedar set, or a decision that needs none."""

    sources: tuple[PolicySource, ...]
    cedar: cedarpy.PolicySet | None
    fixed: PolicyDecision | None
    paths: Paths | None  # the context paths these policies read (None: all of it)

    @classmethod
    def of(cls, sources: tuple[PolicySource, ...]) -> _ActionSet:
        fixed = _fixed(sources)
        cedar = None
        if fixed is None:
            cedar = policy_set({source.id: source.policy for source in sources})
        return cls(sources, cedar, fixed, context_paths(source.policy for source in sources))

    @cached_property
    def reads(self) -> frozenset[str]:
        """The context attributes these policies read."""
        return CONTEXT_ATTRIBUTES if self.paths is None else frozenset(self.paths)


class PolicyIndex:
    """The policies of one generation, by action; ``decide`` is safe from any thread."""

    def __init__(
        self, sources: Iterable[PolicySource], generation: int = 0, *, dormant: Iterable[PolicySource] = ()
    ) -> None:
        self.generation = generation
        self.dormant = tuple(dormant)  # policies naming only tools this catalog does not serve
        #: The tools dormant policies name: a call of one finds this set older than the catalog.
        self.dormant_tools = frozenset(tool for source in self.dormant for tool in scoped_tools(source))
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
        self._callers: dict[tuple[str, str, str, frozenset[str], frozenset[str]], _ActionSet] = {}
        self._slicer = ToolSlicer(self.sources.values())
        self._cache: OrderedDict[str, PolicyDecision] = OrderedDict()
        self._entities: OrderedDict[str, cedarpy.Entities] = OrderedDict()
        self._entity_text: dict[tuple[Who, str, Hashable], str] = {}
        self._calls: dict[Hashable, PolicyDecision] = {}
        self._decided: dict[tuple[bool, tuple[str, ...]], PolicyDecision] = {}
        self._lock = threading.Lock()
        #: Which principal attributes the kernel must be asked for (role, trust), read from the policies.
        self.principal_reads = reads_variable((source.policy for source in self.sources.values()), "principal")

    def applicable(self, action: str) -> tuple[PolicySource, ...]:
        """The policies whose action scope admits ``action``, in load order."""
        return self._set(action).sources

    def evaluated(self, call: CedarCall) -> tuple[PolicySource, ...]:
        """The policies ``call`` is evaluated against: those of its action that can match its caller and tool."""
        return self._for_caller(self._set(call.action), call, tool_state(call.resource)).sources

    def fixed(self, action: str) -> PolicyDecision | None:
        """The decision for every call of ``action`` when no condition can change it, else None.

        None, too, for a tool a dormant policy names: that policy must be brought into force first.
        """
        if self.dormant_tools and action.partition(".")[0] in self.dormant_tools:
            return None
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
        """Evaluate ``call`` against the policies of its action that can admit its principal and tool."""
        entry = self._set(call.action)
        if entry.fixed is not None:
            return entry.fixed
        state = tool_state(call.resource)
        entry = self._for_caller(entry, call, state)
        if entry.fixed is not None:
            return entry.fixed
        assert entry.cedar is not None
        # The request is built in a fixed order, so equal requests encode equally (a reordering only misses).
        shown = (call.who, call.action, state)
        entities = self._entity_text.get(shown)
        if entities is None:  # the same principal calling the same tool again: encoded once per policy set
            entities = compact_json(call.entities())
            if len(self._entity_text) >= _ENTITIES_SIZE:
                self._entity_text.clear()
            self._entity_text[shown] = entities
        context = compact_json(prune(call.context, entry.paths))
        key = f"{call.action}\0{entities}\0{context}"
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            parsed = self._entities.get(entities)
        if parsed is None:
            parsed = cedarpy.Entities.from_json_str(entities)
        result = cedarpy.is_authorized(call.request(context), entry.cedar, parsed)
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
        diagnostics = result.diagnostics
        if diagnostics.errors:
            return self._decision(result, applicable)
        # Without errors the decision follows from the verdict and the satisfied policies alone: made once.
        key = (result.allowed, tuple(diagnostics.reasons))
        decision = self._decided.get(key)
        if decision is None:
            decision = self._decision(result, applicable)
            with self._lock:
                if len(self._decided) >= _CACHE_SIZE:
                    self._decided.clear()
                self._decided[key] = decision
        return decision

    def _decision(self, result: cedarpy.AuthzResult, applicable: tuple[PolicySource, ...]) -> PolicyDecision:
        diagnostics = result.diagnostics
        satisfied = [self.sources[policy_id] for policy_id in diagnostics.reasons if policy_id in self.sources]
        errors = diagnostics.errors
        errored = errored_policies(errors) if errors else set()
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
            entry = self._sets[action] = _ActionSet.of(
                tuple(source for source in self.sources.values() if source.id in named)
            )
        return entry

    def _for_caller(self, entry: _ActionSet, call: CedarCall, state: Hashable) -> _ActionSet:
        """``entry`` without the policies that cannot match this caller and tool (colony.policy.slicing)."""
        excluded = self._slicer.excluded(call.tool, call.resource, state)
        key = (call.action, call.tool, call.who.agent_id, call.who.groups, excluded)
        found = self._callers.get(key)
        if found is None:
            sources = tuple(
                source
                for source in entry.sources
                if source.id not in excluded
                and admits_principal(source.policy.principal, call.who)
                and admits_resource(source.policy.resource, call.tool)
            )
            found = entry if len(sources) == len(entry.sources) else _ActionSet.of(sources)
            with self._lock:
                if len(self._callers) >= _CALLERS_SIZE:
                    self._callers.clear()
                self._callers[key] = found
        return found


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
