"""The Governor: the only code that proposes, holds, executes, records and rolls back a governed call.

    propose (risk from the catalog spec, never lowered by the caller)
      EXECUTE -> run with the consumed authorization -> record (attested)
      HOLD    -> the kernel opened an approval request; no strategy: HELD (the caller
                 resubmits with ``approval_id`` once a person approved it);
                 with a strategy (a person decides here): its decision goes to the kernel,
                 approved: claim the one-time authorization, run -> record (attested);
                 rejected or timed out: the kernel recorded the refusal
      REFUSE  -> the verdict is the answer (the kernel laid a FAILURE trace)
    a failed check after the run -> the declared rollback action -> record as failed

A blocking action this process runs itself (no proposing strategy, no check after
the run) is proposed, run and recorded in one worker thread (one_hop.py): one hop
between the event loop and a thread instead of three, under the same deadline.

Every action runs under one deadline: the call's own timeout (``call_timeout`` of its
tool), at most the executor's ceiling, cut to the runtime seconds its reservation can
hold (``ColonyKernel.reserve_runtime``), so calls running side by side never use more
than the budget between them. The executor kills the work at the deadline; what ran is
recorded with the runtime it measured, charged even past the budget (flagged, never refused).

The Prefect layer plugs in strategies (its executor, pause/suspend for HOLD,
events); it does not copy this logic.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio.to_thread

from colony.deadlines import deadline_scope, kill_grace
from colony.errors import ColonyError, ToolInputError, VerificationError
from colony.runtime.authorization import Authorization
from colony.runtime.call import CallOutcome, CallRequest, CallStatus
from colony.runtime.catalog import CatalogTool
from colony.runtime.executor import BlockingAction, Executor, InProcessExecutor, timed_out
from colony.runtime.governed import OutcomeDraft, call_seconds, failed_as, outcome_report, proposal_for, ran_as
from colony.runtime.held import approval_view, check_resubmission
from colony.runtime.kernels import KernelProvider
from colony.runtime.one_hop import Handoff, Phase, run_in_one_hop
from colony.runtime.principal import Acting
from colony.telemetry import APPROVAL, EXECUTE, GATE, RECORD, stage

__all__ = ["GovernanceEvents", "Governor", "HeldCall", "HoldDecision", "HoldStrategy", "Proposer", "Verifier"]

_MIN_RATIONALE = 20
MAX_RUNS_WITHIN = 86400.0  # the bound of ProposeActionRequest.runs_within_seconds


@dataclass(frozen=True)
class HeldCall:
    """A call the gate held, as a reviewer needs to see it."""

    tool: str
    action: str
    acting: Acting
    arguments: dict[str, Any]
    verdict: dict[str, Any]


@dataclass(frozen=True)
class HoldDecision:
    """A person's decision on a held call."""

    approved: bool
    reviewer: str  # the principal that decided, as every record names it
    note: str = ""
    display_name: str | None = None  # a name the reviewer typed: shown beside ``reviewer``, never instead


HoldStrategy = Callable[[HeldCall], Awaitable[HoldDecision | None]]
"""Waits for a person; None means nobody decided in time."""

Proposer = Callable[[Any], Awaitable[Any]]
"""Asks the gate: a ProposeActionRequest in, a GateVerdict out (Prefect's is a task cached per flow run)."""

Verifier = Callable[[Any], Awaitable[None]]
"""A check run after the action succeeded (given its result); raising rolls the action back."""


class GovernanceEvents(Protocol):
    """Where the Governor reports what automations may act on (the Prefect layer emits events)."""

    def gate_refused(self, acting: Acting, tool: str, action: str, verdict: dict[str, Any]) -> None:
        """A refusal, a rejection or a timed-out approval."""

    def role_changed(self, agent_id: str, before: str, after: str, trust: float) -> None:
        """An outcome moved an agent to another role."""


@dataclass
class Governor:
    """Gate, then execute, then record: every governed call, from every surface."""

    kernels: KernelProvider
    executor: Executor
    on_hold: HoldStrategy | None = None
    events: GovernanceEvents | None = None
    propose: Proposer | None = None
    clock: Callable[[], float] = field(default=time.monotonic)

    async def govern(
        self,
        tool: CatalogTool,
        action: str,
        arguments: dict[str, Any],
        request: CallRequest,
        acting: Acting,
        verify: Verifier | None = None,
    ) -> CallOutcome:
        """Propose the call, act on the verdict, record what happened."""
        from colony.kernel import ApprovalState, Decision

        if request.approval_id is not None:
            return await self.resume(tool, action, arguments, request, acting, verify)
        rationale = (request.rationale or "").strip()
        if len(rationale) < _MIN_RATIONALE:
            raise ToolInputError.for_field(
                "rationale",
                f"{tool.name}.{action} changes the world, so the gate judges it: give a rationale "
                f"(why it is necessary, at least {_MIN_RATIONALE} characters) and a rollback_plan "
                "(how to undo it), with evidence (tests, PRs, logs) if you have it",
                expected=f"a string of at least {_MIN_RATIONALE} characters",
            )
        proposal = proposal_for(tool, action, arguments, request, acting)
        outcome = OutcomeDraft(tool.name, action, acting, {}, version=tool.cls.spec.version)
        blocking = self._blocking(tool, action, verify)
        if blocking is not None:  # the gate, the action and the record in one worker thread
            hop = await self._one_hop(tool, blocking, proposal, arguments, outcome)
            verdict = hop.values["verdict"]
        else:
            with stage(GATE) as gate:
                if self.propose is not None:
                    verdict = await self.propose(proposal)
                else:
                    verdict = await anyio.to_thread.run_sync(self.kernels.get().propose_action, proposal)
                gate.verdict(verdict)
        shown = {**verdict.seed_dict(), "proposal_id": verdict.proposal_id}
        if verdict.approval_id is not None:
            shown["approval_id"] = verdict.approval_id
        outcome.verdict = shown
        if blocking is not None and verdict.decision is Decision.EXECUTE:
            return await self._after_one_hop(tool, hop, outcome)
        if verdict.decision is Decision.REFUSE:
            self._refused(outcome, shown)
            return outcome.finish(CallStatus.REFUSED)
        token = verdict.authorization  # the kernel's own, when it issued one (EXECUTE)
        reviewer = None
        if verdict.decision is Decision.HOLD:
            assert verdict.approval_id is not None
            with stage(APPROVAL) as waiting:
                approval = await self._kernel(lambda kernel: kernel.get_approval(verdict.approval_id))
                waiting.approval(approval)
                outcome.approval = approval_view(approval)
                if self.on_hold is None:
                    return outcome.finish(CallStatus.HELD)
                decision = await self.on_hold(HeldCall(tool.name, action, acting, arguments, shown))
                approval = await self._settle(approval.approval_id, decision)
                waiting.approval(approval)
                outcome.approval = approval_view(approval)
                if approval.state is not ApprovalState.APPROVED:
                    return await self._not_approved(outcome, approval)
                token, reviewer = await self._claim(approval, tool.name, action, arguments, acting)
            outcome.verdict = approved_verdict(shown, reviewer)
        assert verdict.proposal_id is not None
        authorization = Authorization._issue(
            proposal_id=verdict.proposal_id,
            agent_id=acting.agent_id,
            tool=tool.name,
            action=action,
            token=token,
            approved_by=reviewer,
        )
        return await self._execute(tool, action, arguments, authorization, outcome, verify)

    async def resume(
        self,
        tool: CatalogTool,
        action: str,
        arguments: dict[str, Any],
        request: CallRequest,
        acting: Acting,
        verify: Verifier | None = None,
    ) -> CallOutcome:
        """A resubmitted held call: HELD while pending, REJECTED once refused, run once when approved."""
        from colony.kernel import ApprovalState, arguments_digest

        assert request.approval_id is not None
        approval_id = request.approval_id
        with stage(APPROVAL) as lookup:
            approval = await self._kernel(lambda kernel: kernel.get_approval(approval_id))
            lookup.approval(approval)
        check_resubmission(approval, tool.name, action, arguments_digest(arguments), acting)
        shown = {
            "decision": "hold",
            "gate_score": approval.gate_score,
            "reason": approval.reason,
            "required_evidence": list(approval.required_evidence),
            "proposal_id": approval.proposal_id,
            "approval_id": approval.approval_id,
        }
        outcome = OutcomeDraft(tool.name, action, acting, shown, version=tool.cls.spec.version)
        outcome.approval = approval_view(approval)
        if approval.state is ApprovalState.PENDING:
            return outcome.finish(CallStatus.HELD)
        if approval.state is not ApprovalState.APPROVED:
            return await self._not_approved(outcome, approval)
        token, reviewer = await self._claim(approval, tool.name, action, arguments, acting)
        outcome.verdict = approved_verdict(shown, reviewer)
        authorization = Authorization._issue(
            proposal_id=approval.proposal_id,
            agent_id=acting.agent_id,
            tool=tool.name,
            action=action,
            token=token,
            approved_by=reviewer,
        )
        return await self._execute(tool, action, arguments, authorization, outcome, verify)

    def _blocking(self, tool: CatalogTool, action: str, verify: Verifier | None) -> BlockingAction | None:
        """The action as a plain call when the whole call can run in one worker thread, else None.

        Only this process's own executor offers it, for an action it would run in a thread
        anyway; a proposing strategy (Prefect's task) or a check after the run keeps the hops.
        """
        if self.propose is not None or verify is not None or not isinstance(self.executor, InProcessExecutor):
            return None
        return self.executor.blocking(tool, action)

    async def _one_hop(
        self,
        tool: CatalogTool,
        blocking: BlockingAction,
        proposal: Any,
        arguments: dict[str, Any],
        outcome: OutcomeDraft,
    ) -> Handoff:
        """Propose, and on EXECUTE run the action and record it, in one worker thread (see one_hop.py)."""
        from colony.kernel import Decision, Reporter

        kernel = self.kernels.get()
        wanted = call_seconds(tool, outcome.action, arguments, self.executor.timeout_seconds)
        proposal = proposal.model_copy(update={"runs_within_seconds": min(wanted, MAX_RUNS_WITHIN)})

        def work(handoff: Handoff) -> None:
            values = handoff.values
            with stage(GATE) as gate:
                verdict = values["verdict"] = kernel.propose_action(proposal)
                gate.verdict(verdict)
            if verdict.decision is not Decision.EXECUTE:
                return
            authorization = values["authorization"] = Authorization._issue(
                proposal_id=verdict.proposal_id,
                agent_id=outcome.acting.agent_id,
                tool=outcome.tool,
                action=outcome.action,
                token=verdict.authorization,
            )
            held = verdict.runtime_held  # grown at the verdict, or asked for now
            limit = values["limit"] = (
                min(wanted, held) if held is not None else _granted(kernel, authorization.proposal_id, wanted)
            )
            with deadline_scope(limit) as left:  # from the action's start, as the executor's own
                started = values["started"] = self.clock()
                if not handoff.move(Phase.RUNNING, expires_at=time.monotonic() + left + kill_grace(left)):
                    return
                try:
                    with stage(EXECUTE):
                        values["result"] = blocking(arguments, authorization)
                    what, passed = ran_as(values["result"], limit), True
                except ColonyError as error:
                    values["error"] = error
                    what, passed = f"{failed_as(error)}: {error}", False
            if not handoff.move(Phase.RECORDING):
                return  # past its deadline: the loop answered timed out and records that
            report = outcome_report(outcome, what, passed, max(0.0, self.clock() - started))
            before = kernel.agent_profile(report.agent_id).role if self.events is not None else None
            with stage(RECORD):
                values["record"] = (
                    kernel.record_outcome(
                        report, authorization=authorization.token, reported_by=Reporter.RUNTIME, measured=True
                    ),
                    before,
                )

        return await run_in_one_hop(work, wanted + kill_grace(wanted))

    async def _after_one_hop(self, tool: CatalogTool, hop: Handoff, outcome: OutcomeDraft) -> CallOutcome:
        """The outcome of an EXECUTE run in one hop; an action that overran its deadline is recorded as timed out."""
        values = hop.values
        if hop.state()[0] is Phase.ABANDONED:
            error = timed_out(tool, values["limit"])
            await self._record(
                outcome, values["authorization"], f"{failed_as(error)}: {error}", False, values["started"]
            )
            return outcome.finish(CallStatus.FAILED, error=error)
        record, before = values["record"]
        self._recorded(outcome, record, before)
        if "error" in values:
            return outcome.finish(CallStatus.FAILED, error=values["error"])
        return outcome.finish(CallStatus.EXECUTED, result=values["result"])

    async def _kernel(self, work: Callable[[Any], Any]) -> Any:
        kernel = self.kernels.get()
        return await anyio.to_thread.run_sync(lambda: work(kernel))

    async def _settle(self, approval_id: str, decision: HoldDecision | None) -> Any:
        """Put the hold strategy's decision in the kernel; when another surface decided first, that decision."""
        from colony.errors import ApprovalError

        def decide(kernel: Any) -> Any:
            try:
                if decision is None:
                    return kernel.expire_approval(approval_id)
                if decision.approved:
                    return kernel.approve(
                        approval_id, decision.reviewer, decision.note, display_name=decision.display_name
                    )
                return kernel.reject(approval_id, decision.reviewer, decision.note, display_name=decision.display_name)
            except ApprovalError as error:
                if type(error) is not ApprovalError or error.state == "pending":  # unknown id, or budget
                    raise
                return kernel.get_approval(approval_id)

        return await self._kernel(decide)

    async def _claim(
        self, approval: Any, tool: str, action: str, arguments: dict[str, Any], acting: Acting
    ) -> tuple[str | None, str | None]:
        """The approved call's one-time authorization token, and who approved it."""
        from colony.kernel import arguments_digest

        digest = arguments_digest(arguments)
        claim = await self._kernel(
            lambda kernel: kernel.claim_approval(
                approval.approval_id, agent_id=acting.agent_id, tool=tool, action=action, arguments_digest=digest
            )
        )
        return claim.authorization, claim.approval.decided_by

    async def _not_approved(self, outcome: OutcomeDraft, approval: Any) -> CallOutcome:
        """A rejected or expired approval: the kernel recorded the refusal; the caller gets that record."""

        def recorded(kernel: Any) -> dict[str, Any] | None:
            entry = kernel.consequence_of(approval.proposal_id)
            profile = kernel.find_profile(approval.agent_id)
            if entry is None or profile is None:
                return None
            return {
                "status": "recorded",
                "consequence_id": entry.consequence_id,
                "trust_score": entry.trust_after,
                "role": profile.role.value,
            }

        outcome.record = await self._kernel(recorded)
        state = approval.state
        status = CallStatus.TIMED_OUT if state.value == "expired" and self.on_hold is not None else CallStatus.REJECTED
        self._refused(outcome, {**outcome.verdict, "status": status.value})
        return outcome.finish(status)

    async def _execute(
        self,
        tool: CatalogTool,
        action: str,
        arguments: dict[str, Any],
        authorization: Authorization,
        outcome: OutcomeDraft,
        verify: Verifier | None,
    ) -> CallOutcome:
        wanted = call_seconds(tool, action, arguments, self.executor.timeout_seconds)
        proposal_id = authorization.proposal_id
        limit = await self._kernel(lambda kernel: _granted(kernel, proposal_id, wanted))
        started = self.clock()
        try:
            with deadline_scope(limit), stage(EXECUTE):
                result = (await self.executor.run(tool, action, arguments, authorization)).result
        except ColonyError as error:
            await self._record(outcome, authorization, f"{failed_as(error)}: {error}", False, started)
            return outcome.finish(CallStatus.FAILED, error=error)
        if verify is not None:
            try:
                await verify(result)
            except Exception as error:  # noqa: BLE001 - any failed check rolls the action back
                problem = VerificationError(f"the check after {tool.name}.{action} failed: {error}")
                undone = await self._rollback(tool, action, arguments, authorization, outcome)
                await self._record(outcome, authorization, f"failed: {problem}{undone}", False, started)
                return outcome.finish(CallStatus.FAILED, error=problem, result=result)
        await self._record(outcome, authorization, ran_as(result, limit), True, started)
        return outcome.finish(CallStatus.EXECUTED, result=result)

    async def _rollback(
        self,
        tool: CatalogTool,
        action: str,
        arguments: dict[str, Any],
        authorization: Authorization,
        outcome: OutcomeDraft,
    ) -> str:
        undo = tool.cls.rollback_actions.get(action)
        if undo is None:
            return "; no rollback action is declared"
        declared = set(tool.cls.actions()[undo].input_model.model_fields)
        try:
            await self.executor.run(
                tool, undo, {k: v for k, v in arguments.items() if k in declared}, authorization.rollback(undo)
            )
        except ColonyError as error:
            return f"; rollback {undo} failed: {error}"
        outcome.rolled_back = (undo,)
        return f"; rolled back with {undo}"

    async def _record(
        self, outcome: OutcomeDraft, authorization: Authorization | None, what: str, passed: bool, started: float
    ) -> None:
        from colony.kernel import Reporter

        kernel = self.kernels.get()
        report = outcome_report(outcome, what, passed, max(0.0, self.clock() - started))
        token = authorization.token if authorization is not None else None
        before = None
        if self.events is not None:
            before = (await anyio.to_thread.run_sync(kernel.agent_profile, report.agent_id)).role
        with stage(RECORD):
            record = await anyio.to_thread.run_sync(  # Colony ran it and measured it: its own report
                lambda: kernel.record_outcome(report, authorization=token, reported_by=Reporter.RUNTIME, measured=True)
            )
        self._recorded(outcome, record, before)

    def _recorded(self, outcome: OutcomeDraft, record: Any, before: Any) -> None:
        """Keep the record on the outcome; report a role the outcome changed."""
        outcome.record = record.model_dump(mode="json")
        if self.events is not None and before is not None and record.role is not before:
            self.events.role_changed(outcome.acting.agent_id, before.value, record.role.value, record.trust_score)

    def _refused(self, outcome: OutcomeDraft, verdict: dict[str, Any]) -> None:
        if self.events is not None:
            self.events.gate_refused(outcome.acting, outcome.tool, outcome.action, verdict)


def _granted(kernel: Any, proposal_id: str, wanted: float) -> float:
    """The call's deadline: ``wanted`` seconds, cut to the runtime its reservation can hold."""
    held = kernel.reserve_runtime(proposal_id, wanted)
    return wanted if held is None else min(wanted, held)


def approved_verdict(held: dict[str, Any], reviewer: str | None) -> dict[str, Any]:
    """The verdict of a held call a person approved: it runs, so it answers ``execute``, saying who approved."""
    return {**held, "decision": "execute", "approved_by": reviewer}
