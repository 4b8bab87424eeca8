"""The operator's policies as one step of ``Runtime.call``: before the gate, after the capability tokens.

    forbid -> PolicyDeniedError (403): the determining policies and their @reason
    hold   -> the call becomes governed and a person must approve it (the approval's reason
              names the policies); the gate still judges it first
    permit -> on to the gate, unchanged

A governed call's proposal carries the decision and the policy ids into the audit log.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import anyio.to_thread

from colony.offload import INLINE_BYTES, off_the_loop
from colony.policy import (
    ActionFacts,
    CedarCall,
    Effect,
    PolicyDecision,
    PolicySettings,
    PolicyStore,
    ToolFacts,
    Who,
    call_context,
    compact_json,
)
from colony.runtime.call import CallRequest
from colony.runtime.catalog import Catalog, CatalogTool
from colony.runtime.governed import estimate_for
from colony.runtime.kernels import KernelProvider
from colony.runtime.principal import Acting, Principal

__all__ = ["PolicyStep", "tool_facts"]

_KERNEL_READS = frozenset({"role", "trust"})
_INPUT_READS = frozenset({"input", "size"})


def tool_facts(tool: CatalogTool) -> ToolFacts:
    """What policies may know of a catalog tool."""
    spec = tool.cls.spec
    return ToolFacts(
        name=tool.name,
        version=spec.version,
        domain=spec.domain,
        locality=spec.execution_locality.value,
        policy_tags=tuple(spec.policy_tags),
        primary=tool.primary_action,
        actions={
            name: ActionFacts(
                definition.input_schema, tool.side_effecting(name), tool.governed(name), definition.normalized_input
            )
            for name, definition in tool.cls.actions().items()
        },
    )


_DECLARED = CallRequest("")  # no caller estimate: the tool's declared cost


class PolicyStep:
    """Decides a call against the policies in force (``decide``) and applies the decision (``apply``)."""

    def __init__(self, catalog: Catalog, kernels: KernelProvider, settings: PolicySettings | None = None) -> None:
        settings = settings or PolicySettings()
        self.catalog = catalog
        self.kernels = kernels
        self._facts: dict[str, ToolFacts] = {}
        self._facts_generation = -1
        self.store = PolicyStore(
            settings.resolved(kernels.home),
            lambda: self.catalog.generation,
            self._catalog_facts,
            check_seconds=settings.reload_seconds,
        )

    def _catalog_facts(self) -> list[ToolFacts]:
        return [self.facts(tool) for tool in self.catalog.tools.values()]

    def facts(self, tool: CatalogTool) -> ToolFacts:
        """The tool's facts, read once per catalog generation."""
        if self._facts_generation != self.catalog.generation:
            self._facts, self._facts_generation = {}, self.catalog.generation
        found = self._facts.get(tool.name)
        if found is None:
            found = self._facts[tool.name] = tool_facts(tool)
        return found

    def fixed(self, tool: CatalogTool, action: str) -> PolicyDecision | None:
        """The decision no condition can change for this action (today's set, no reload due), else None.

        Most actions under most policy sets have one (the shipped baseline permits them all): the
        call is answered without a coroutine, a context or Cedar.
        """
        index = self.store.fresh()
        return None if index is None else index.fixed(f"{tool.name}.{action}")

    async def decide(
        self,
        tool: CatalogTool,
        action: str,
        arguments: dict[str, Any],
        principal: Principal,
        request: CallRequest,
        *,
        now: float | None = None,
    ) -> PolicyDecision:
        """What the policies in force decide about this call (PolicyError when none could ever be loaded)."""
        index = self.store.fresh()
        if index is None or tool.name in index.dormant_tools:  # reading and validating stays off the event loop
            index = await anyio.to_thread.run_sync(lambda: self.store.serving(tool.name))
        fixed = index.fixed(f"{tool.name}.{action}")
        if fixed is not None:
            return fixed
        acting = principal.acting_for(request.agent_id)
        role, trust = "", 0.0
        if index.principal_reads & _KERNEL_READS:  # the kernel is asked only when a policy reads them
            profile = await anyio.to_thread.run_sync(lambda: self.kernels.get().agent_profile(acting.agent_id))
            role, trust = profile.role.value, profile.trust_score
        who = Who(acting.agent_id, principal.operator, principal.groups, principal.capabilities, role, trust)
        # The context is a function of these: a repeated call is answered before it is built again.
        try:
            raw = compact_json([arguments, request.target, request.budget_estimate])
        except (TypeError, ValueError):  # not JSON (an in-process caller's objects): no shortcut
            raw = None
        minute = int(time.time() if now is None else now) // 60
        key = (who, tool.name, action, acting.acted_by, minute, raw)
        if raw is not None and (known := index.recall(key)) is not None:
            return known
        facts = self.facts(tool)
        reads = index.reads(f"{tool.name}.{action}")
        estimate, above = {}, False
        if "estimate" in reads:
            declared = estimate_for(tool, _DECLARED)
            estimate = estimate_for(tool, request)
            above = any(estimate[name] > declared[name] for name in declared)

        def evaluate() -> PolicyDecision:
            context = call_context(
                facts,
                action,
                arguments,
                target=request.target,
                acted_by=acting.acted_by,
                estimate=estimate,
                above_default=above,
                now=now,
                reads=reads,
            )
            return index.decide(CedarCall.build(who, tool.name, action, facts.resource(action), context))

        # Policies reading the input see it checked against the tool's schema and typed for Cedar:
        # for large arguments, that work may take a second and is done off the event loop.
        if reads & _INPUT_READS and raw is not None and len(raw) > INLINE_BYTES:
            decision = await off_the_loop(evaluate)
        else:
            decision = evaluate()
        if raw is not None:
            index.remember(key, decision)
        return decision

    @staticmethod
    def apply(
        decision: PolicyDecision,
        request: CallRequest,
        tool: CatalogTool,
        action: str,
        acting: Acting,
        *,
        governed: bool,
    ) -> CallRequest:
        """The request as the rest of the pipeline runs it; PolicyDeniedError for a forbidden call.

        ``governed`` is the action's own (``tool.governed(action)``). A governed call carries the
        decision to its proposal (and so to the audit log), whatever the caller put in ``policy`` and
        ``approval_reason``; a pure call leaves no record to carry it.
        """
        if decision.effect is Effect.FORBID:
            raise decision.refusal(f"{tool.name}.{action}", acting.describe())
        if decision.effect is Effect.HOLD:
            return dataclasses.replace(
                request, approval_required=True, approval_reason=decision.hold_reason(), policy=decision.record()
            )
        if governed or request.approval_required or request.approval_id is not None:
            return dataclasses.replace(request, approval_reason=None, policy=decision.record())
        return request
