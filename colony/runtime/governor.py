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

One path for every call: the steps that are plain kernel calls (the gate, growing the
reservation, the record) run one after another in one worker thread (``hop.py``), and the
executor says whether the action is one of them (``Executor.blocking``): this process's
own executor runs a blocking action there, so the whole call is one hop between the event
loop and a thread; Prefect's runs it as a task on the loop, between a hop for the steps
before it and one for the record. A proposing strategy asks the gate on the loop first,
and a check after the run runs on the loop before the record.

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
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.to_thread

from colony.deadlines import deadline_scope, kill_grace
from colony.errors import ColonyError, ToolInputError, VerificationError
from colony.runtime.authorization import Authorization
from colony.runtime.call import CallOutcome, CallRequest, CallStatus
from colony.runtime.catalog import CatalogTool
from colony.runtime.executor import BlockingAction, Executor, timed_out
from colony.runtime.governed import OutcomeDraft, call_seconds, failed_as, outcome_report, proposal_for, ran_as
from colony.runtime.held import approval_view, check_resubmission
from colony.runtime.hop import Handoff, Phase, run_in_one_hop
from colony.runtime.kernel_port import KernelPort, KernelSource
from colony.runtime.principal import Acting
from colony.runtime.views import RecordView, VerdictView
from colony.telemetry import APPROVAL, EXECUTE, GATE, RECORD, stage

if TYPE_CHECKING:
    from colony.kernel import Approval, GateVerdict, OutcomeRecord, ProposeActionRequest, Role

__all__ = ["GovernanceEvents", "Governor", "HeldCall", "HoldDecision", "HoldStrategy", "Proposer", "Verifier"]

T = TypeVar("T")
_MIN_RATIONALE = 20
MAX_RUNS_WITHIN = 86400.0  # the bound of ProposeActionRequest.runs_within_seconds


@dataclass(frozen=True)
class HeldCall:
    """A call the gate held, as a reviewer needs to see it."""

    tool: str
    action: str
    acting: Acting
    arguments: dict[str, Any]
    verdict: VerdictView


@dataclass(frozen=True)
class HoldDecision:
    """A person's decision on a held call."""

    approved: bool
    reviewer: str  # the principal that decided, as every record names it
    note: str = ""
    display_name: str | None = None  # a name the reviewer typed: shown beside ``reviewer``, never instead


HoldStrategy = Callable[[HeldCall], Awaitable[HoldDecision | None]]
"""Waits for a person; None means nobody decided in time."""

Proposer = Callable[["ProposeActionRequest"], Awaitable["GateVerdict"]]
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
class Course:
    """What a governed call's steps produced so far: the hop's thread fills it, the loop reads it after the hop."""

    verdict: GateVerdict | None = None
    authorization: Authorization | None = None
    limit: float = 0.0  # the action's deadline, in seconds from its start
    started: float | None = None  # on the Governor's clock, once the action started
    result: Any = None
    error: ColonyError | None = None
    record: tuple[OutcomeRecord, Role | None] | None = None  # the record, and the agent's role before it


@dataclass
class Governor:
    """Gate, then execute, then record: every governed call, from every surface."""

    kernels: KernelSource
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
        outcome = OutcomeDraft(tool.name, action, acting, None, version=tool.cls.spec.version)
        course = Course()
        if self.propose is not None:  # a strategy asks the gate (Prefect's task); else the hop below does
            with stage(GATE) as gate:
                course.verdict = await self.propose(proposal)
                gate.verdict(course.verdict)
        if course.verdict is None or course.verdict.decision is Decision.EXECUTE:
            await self._carry(tool, arguments, outcome, course, verify, proposal)
        verdict = course.verdict
        assert verdict is not None and verdict.proposal_id is not None
        outcome.verdict = shown = VerdictView.of(verdict)
        if verdict.decision is Decision.REFUSE:
            self._refused(outcome, shown.to_dict())
            return outcome.finish(CallStatus.REFUSED)
        if verdict.decision is Decision.HOLD:
            approval_id = verdict.approval_id
            assert approval_id is not None
            with stage(APPROVAL) as waiting:
                approval = await self._kernel(lambda kernel: kernel.get_approval(approval_id))
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
            course = await self._approved(tool, arguments, outcome, approval, verify)
        return await self._finish(tool, arguments, outcome, course, verify)

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
        check_resubmission(approval, tool.name, tool.cls.spec.tool_id, action, arguments_digest(arguments), acting)
        shown = VerdictView.held(approval)
        outcome = OutcomeDraft(tool.name, action, acting, shown, version=tool.cls.spec.version)
        outcome.approval = approval_view(approval)
        if approval.state is ApprovalState.PENDING:
            return outcome.finish(CallStatus.HELD)
        if approval.state is not ApprovalState.APPROVED:
            return await self._not_approved(outcome, approval)
        course = await self._approved(tool, arguments, outcome, approval, verify)
        return await self._finish(tool, arguments, outcome, course, verify)

    async def _approved(
        self,
        tool: CatalogTool,
        arguments: dict[str, Any],
        outcome: OutcomeDraft,
        approval: Approval,
        verify: Verifier | None,
    ) -> Course:
        """Claim an approved call's one-time authorization, then take the steps that run it."""
        from colony.kernel import arguments_digest

        acting, action = outcome.acting, outcome.action
        digest = arguments_digest(arguments)
        claim = await self._kernel(
            lambda kernel: kernel.claim_approval(
                approval.approval_id,
                agent_id=acting.agent_id,
                tool=tool.name,
                target=tool.cls.spec.tool_id,
                action=action,
                arguments_digest=digest,
            )
        )
        reviewer = claim.approval.decided_by
        assert outcome.verdict is not None
        outcome.verdict = outcome.verdict.approved(reviewer)
        authorization = _authorize(outcome, approval.proposal_id, claim.authorization, reviewer)
        return await self._carry(tool, arguments, outcome, Course(authorization=authorization), verify)

    async def _carry(
        self,
        tool: CatalogTool,
        arguments: dict[str, Any],
        outcome: OutcomeDraft,
        course: Course,
        verify: Verifier | None,
        proposal: ProposeActionRequest | None = None,
    ) -> Course:
        """Take the call's steps in one worker thread, as far as they go there.

        The gate (unless the course has its verdict or authorization), the reservation's
        runtime, and when the executor gives the action as a plain call and no check follows
        it: the action under its deadline, and its record.
        """
        from colony.kernel import Decision

        kernel = self.kernels.get()
        action = outcome.action
        wanted = call_seconds(tool, action, arguments, self.executor.timeout_seconds)
        blocking = self.executor.blocking(tool, action) if verify is None else None

        def steps(handoff: Handoff) -> None:
            held = None
            if course.authorization is None:
                if course.verdict is None:
                    assert proposal is not None
                    asked = proposal.model_copy(update={"runs_within_seconds": min(wanted, MAX_RUNS_WITHIN)})
                    with stage(GATE) as gate:
                        course.verdict = kernel.propose_action(asked)
                        gate.verdict(course.verdict)
                verdict = course.verdict
                if verdict.decision is not Decision.EXECUTE:
                    return
                assert verdict.proposal_id is not None
                course.authorization = _authorize(outcome, verdict.proposal_id, verdict.authorization)
                held = verdict.runtime_held  # grown with the verdict, or asked for now
            authorization = course.authorization
            if held is None:
                held = kernel.reserve_runtime(authorization.proposal_id, wanted)
            course.limit = wanted if held is None else min(wanted, held)
            if blocking is not None:
                self._run_here(kernel, handoff, course, blocking, arguments, outcome)

        await run_in_one_hop(steps, wanted + kill_grace(wanted))
        return course

    def _run_here(
        self,
        kernel: KernelPort,
        handoff: Handoff,
        course: Course,
        blocking: BlockingAction,
        arguments: dict[str, Any],
        outcome: OutcomeDraft,
    ) -> None:
        """In the hop's thread: the action under its deadline, then its record (unless the loop gave up on it)."""
        with deadline_scope(course.limit) as left:  # from the action's start, as the executor's own
            course.started = self.clock()
            if not handoff.move(Phase.RUNNING, expires_at=time.monotonic() + left + kill_grace(left)):
                return
            try:
                with stage(EXECUTE):
                    course.result = blocking(arguments, course.authorization)
                what, passed = ran_as(course.result, course.limit), True
            except ColonyError as error:
                course.error = error
                what, passed = f"{failed_as(error)}: {error}", False
        if handoff.move(Phase.RECORDING):  # else past its deadline: the loop answered timed out and records that
            course.record = self._write_record(kernel, outcome, course, what, passed)

    async def _finish(
        self,
        tool: CatalogTool,
        arguments: dict[str, Any],
        outcome: OutcomeDraft,
        course: Course,
        verify: Verifier | None,
    ) -> CallOutcome:
        """The call's outcome once it may run: its record when the hop ran it, else run on the loop and recorded."""
        action, authorization = outcome.action, course.authorization
        assert authorization is not None
        if course.record is not None:
            self._recorded(outcome, *course.record)
            if course.error is not None:
                return outcome.finish(CallStatus.FAILED, error=course.error)
            return outcome.finish(CallStatus.EXECUTED, result=course.result)
        if course.started is not None:  # it ran in the hop past its deadline: the loop answers and records that
            error: ColonyError = timed_out(tool, course.limit)
            await self._record(outcome, course, f"{failed_as(error)}: {error}", False)
            return outcome.finish(CallStatus.FAILED, error=error)
        course.started = self.clock()
        try:
            with deadline_scope(course.limit), stage(EXECUTE):
                result = (await self.executor.run(tool, action, arguments, authorization)).result
        except ColonyError as error:
            await self._record(outcome, course, f"{failed_as(error)}: {error}", False)
            return outcome.finish(CallStatus.FAILED, error=error)
        if verify is not None:
            try:
                await verify(result)
            except Exception as error:  # noqa: BLE001 - any failed check rolls the action back
                problem = VerificationError(f"the check after {tool.name}.{action} failed: {error}")
                undone = await self._rollback(tool, action, arguments, authorization, outcome)
                await self._record(outcome, course, f"failed: {problem}{undone}", False)
                return outcome.finish(CallStatus.FAILED, error=problem, result=result)
        await self._record(outcome, course, ran_as(result, course.limit), True)
        return outcome.finish(CallStatus.EXECUTED, result=result)

    async def _kernel(self, work: Callable[[KernelPort], T]) -> T:
        """``work`` on the kernel, in a worker thread."""
        kernel = self.kernels.get()
        return await anyio.to_thread.run_sync(lambda: work(kernel))

    async def _settle(self, approval_id: str, decision: HoldDecision | None) -> Approval:
        """Put the hold strategy's decision in the kernel; when another surface decided first, that decision."""
        from colony.errors import ApprovalError

        def decide(kernel: KernelPort) -> Approval:
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

    async def _not_approved(self, outcome: OutcomeDraft, approval: Approval) -> CallOutcome:
        """A rejected or expired approval: the kernel recorded the refusal; the caller gets that record."""

        def recorded(kernel: KernelPort) -> RecordView | None:
            entry = kernel.consequence_of(approval.proposal_id)
            profile = kernel.find_profile(approval.agent_id)
            if entry is None or profile is None:
                return None
            return RecordView(
                status="recorded",
                consequence_id=entry.consequence_id,
                trust_score=entry.trust_after,
                role=profile.role.value,
            )

        outcome.record = await self._kernel(recorded)
        state = approval.state
        status = CallStatus.TIMED_OUT if state.value == "expired" and self.on_hold is not None else CallStatus.REJECTED
        shown = outcome.verdict.to_dict() if outcome.verdict is not None else {}
        self._refused(outcome, shown | {"status": status.value})
        return outcome.finish(status)

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

    async def _record(self, outcome: OutcomeDraft, course: Course, what: str, passed: bool) -> None:
        kernel = self.kernels.get()
        record = await anyio.to_thread.run_sync(self._write_record, kernel, outcome, course, what, passed)
        self._recorded(outcome, *record)

    def _write_record(
        self, kernel: KernelPort, outcome: OutcomeDraft, course: Course, what: str, passed: bool
    ) -> tuple[OutcomeRecord, Role | None]:
        """In a worker thread: Colony ran the action and measured it, so the record is its own report."""
        from colony.kernel import Reporter

        assert course.started is not None and course.authorization is not None
        report = outcome_report(outcome, what, passed, max(0.0, self.clock() - course.started))
        before = kernel.agent_profile(report.agent_id).role if self.events is not None else None
        token = course.authorization.token
        with stage(RECORD):
            record = kernel.record_outcome(report, authorization=token, reported_by=Reporter.RUNTIME, measured=True)
        return record, before

    def _recorded(self, outcome: OutcomeDraft, record: OutcomeRecord, before: Role | None) -> None:
        """Keep the record on the outcome; report a role the outcome changed."""
        outcome.record = RecordView.of(record)
        if self.events is not None and before is not None and record.role is not before:
            self.events.role_changed(outcome.acting.agent_id, before.value, record.role.value, record.trust_score)

    def _refused(self, outcome: OutcomeDraft, verdict: dict[str, Any]) -> None:
        if self.events is not None:
            self.events.gate_refused(outcome.acting, outcome.tool, outcome.action, verdict)


def _authorize(
    outcome: OutcomeDraft, proposal_id: str, token: str | None, approved_by: str | None = None
) -> Authorization:
    """The one authorization of a call the gate let run (or a person approved)."""
    return Authorization._issue(
        proposal_id=proposal_id,
        agent_id=outcome.acting.agent_id,
        tool=outcome.tool,
        action=outcome.action,
        token=token,
        approved_by=approved_by,
    )
