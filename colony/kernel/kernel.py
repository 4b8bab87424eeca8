"""ColonyKernel: the eight seed operations over one store, each one transaction.

Every method validates its input first (raising KernelInputError naming the field), then
does all of its reads and writes in a single database transaction, so a refused or failed
call writes nothing and concurrent callers in other processes see whole operations only.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlalchemy import Connection

from colony.errors import AttestationError, KernelInputError
from colony.kernel.actions import ActionKind, resolve_kind
from colony.kernel.approvals import DECIDE_PENDING, Approvals
from colony.kernel.approving import ApprovalOperations
from colony.kernel.attestation import Attestor, Claims, load_secret
from colony.kernel.audit import AuditLog
from colony.kernel.auditing import AuditOperations, gate_record
from colony.kernel.checks import check_name
from colony.kernel.consequences import ConsequenceMemory
from colony.kernel.falsification import FalsificationWorker
from colony.kernel.gate import ActuationGate, GateInputs, GateOutcome, pressure
from colony.kernel.ledger import BUDGET_DIMENSIONS, ResourceLedger
from colony.kernel.models import (
    AgentProfile,
    Approval,
    AttestationMode,
    ColonySignal,
    ColonyStatus,
    ConsequenceRecord,
    DecayRate,
    Decision,
    FalsificationReport,
    GateVerdict,
    KernelModel,
    OutcomeRecord,
    ProposalCounts,
    ProposeActionRequest,
    PruningReport,
    RecordOutcomeRequest,
    Reporter,
    SignalSource,
    SignalType,
)
from colony.kernel.pheromones import Deposit, PheromoneStore
from colony.kernel.proposals import new_proposal_id, read_for_gate, store_proposal
from colony.kernel.pruning import PruningDaemon, RegistryEntry
from colony.kernel.refusal_traces import RefusalTraces
from colony.kernel.reservations import Lease, Reservations, held_by
from colony.kernel.roles import INITIAL_TRUST, AgentRow, RoleAdapter, role_for
from colony.kernel.settings import KernelSettings
from colony.kernel.shares import AgentShares
from colony.kernel.status import StatusReporter
from colony.kernel.store import GuardFailed, Store
from colony.kernel.ticks import TickKeys

__all__ = ["ColonyKernel"]

M = TypeVar("M", bound=KernelModel)


def _coerce(model: type[M], value: M | Mapping[str, Any], field: str = "request") -> M:
    if isinstance(value, model):
        return value
    if isinstance(value, Mapping):
        return model.model_validate(dict(value))
    raise KernelInputError.for_field(field, f"{type(value).__name__} given", expected=f"a {model.__name__} or a dict")


def _signal_type(value: Any) -> SignalType:
    try:
        return SignalType(value)
    except ValueError:
        known = ", ".join(t.value for t in SignalType)
        raise KernelInputError.for_field("signal_type", f"unknown signal type {value!r}", expected=known) from None


def _decay_rate(value: Any) -> DecayRate:
    if isinstance(value, DecayRate):
        return value
    by_name = DecayRate.__members__.get(str(value).upper())
    if by_name is not None:
        return by_name
    try:
        return DecayRate(value)
    except ValueError:
        raise KernelInputError.for_field(
            "decay_rate", f"unknown decay rate {value!r}", expected="fast|normal|slow or 3.0|1.0|0.2"
        ) from None


def _reporter(value: Any) -> Reporter:
    try:
        return Reporter(value)
    except ValueError:
        known = ", ".join(r.value for r in Reporter)
        raise KernelInputError.for_field("reported_by", f"unknown reporter {value!r}", expected=known) from None


def _overspent(usage: Mapping[str, float], held: Mapping[str, float] | None) -> dict[str, float]:
    """Usage past what its reservation held, by dimension (none is judged without a reservation)."""
    if held is None:
        return {}
    over = {name: round(amount - held.get(name, 0.0), 6) for name, amount in usage.items()}
    return {name: amount for name, amount in over.items() if amount > 0}


def _overspend_note(overspent: Mapping[str, float]) -> str:
    if not overspent:
        return ""
    shown = ", ".join(f"{name} {amount:g}" for name, amount in overspent.items())
    return f" [overspent: {shown} past its reservation]"


@dataclass(frozen=True, slots=True)
class _Decided:
    """What a proposal's transaction decided; the verdict is made from it after the commit."""

    outcome: GateOutcome
    budget_approved: bool
    claims: Claims | None
    approval: Approval | None
    runtime_held: float | None
    laid_trace: bool


class ColonyKernel(ApprovalOperations, AuditOperations):
    """The Colony kernel: gate, falsification, ledger, pheromones, roles, consequences, pruning."""

    def __init__(self, settings: KernelSettings | None = None, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings or KernelSettings()
        self.store = Store(self.settings.resolved_database_url())
        self.clock = clock
        self.pheromones = PheromoneStore(
            min_strength=self.settings.min_strength, max_strength=self.settings.max_strength
        )
        self.ledger = ResourceLedger(self.settings.budget_limits(), self.settings.budget_period_seconds)
        self.roles = RoleAdapter()
        self.falsifier = FalsificationWorker()
        self.gate = ActuationGate()
        self.pruner = PruningDaemon()
        self.reporter = StatusReporter(self.pheromones, self.ledger, self.roles)
        self.shares = AgentShares(self.settings.share_caps(), self.settings.agent_budget_share)
        self.reservations = Reservations(self.ledger, self.roles, self.shares)
        self.approvals = Approvals(
            self.roles, self.pheromones, self.settings.approval_ttl_seconds, self.settings.max_pending_approvals
        )
        self.refusal_traces = RefusalTraces()
        secret = self.settings.attestation_secret
        key = secret.get_secret_value().encode() if secret else self.store.run(load_secret)
        self.attestor = Attestor(key, self.settings.attestation_ttl_seconds)
        # The period in which this process last found the budget short: its proposals then take
        # the budget row first, rather than writing a verdict the budget would undo.
        self._budget_short_in: int | None = None

    @classmethod
    def from_env(cls) -> ColonyKernel:
        """A kernel configured from ``COLONY_*`` environment variables (a bad one is named in the error)."""
        return cls(KernelSettings.from_env())

    def close(self) -> None:
        """Release the database connections."""
        self.store.dispose()

    # -- the gate ----------------------------------------------------------------------------------

    @staticmethod
    def _kind(request: ProposeActionRequest) -> ActionKind:
        """The action_type's kind, raised (never lowered) by ``side_effecting`` and ``kind``."""
        return resolve_kind(request.action_type, side_effecting=request.side_effecting, declared=request.kind)

    def _within_limits(self, amounts: Mapping[str, float], prefix: str) -> None:
        """An amount over a whole period's limit is no estimate: KernelInputError naming the dimension."""
        for name, amount in amounts.items():
            limit = self.ledger.limits[name]
            if amount > limit:
                raise KernelInputError.for_field(
                    f"{prefix}{name}", f"{amount:g} exceeds the budget period's limit", expected=f"at most {limit:g}"
                )

    def _estimate(self, request: ProposeActionRequest) -> dict[str, float]:
        given = request.budget_estimate
        if given is None:
            return self.settings.default_estimate()
        self._within_limits(given, "budget_estimate.")
        return {name: float(given.get(name, 0.0)) for name in BUDGET_DIMENSIONS}

    def propose_action(self, request: ProposeActionRequest | Mapping[str, Any]) -> GateVerdict:
        """Falsify, budget-check and trust-check a proposal; store it and return the verdict."""
        request = _coerce(ProposeActionRequest, request)
        evidence = request.evidence_dict()
        kind = self._kind(request)
        estimate = self._estimate(request)
        plan = {
            **evidence,
            "action_type": request.action_type,
            "target": request.target,
            "rationale": request.rationale,
            "rollback_plan": request.rollback_plan,
            "evidence": evidence,
            "agent_id": request.agent_id,
            "budget_estimate": estimate,
        }
        report = self.falsifier.attack(plan, proposal=True, kind=kind)  # built from a validated request
        severity = self.falsifier.max_weight(report)
        now = self.clock()
        proposal_id = new_proposal_id()

        period_now = self.ledger.period(now)
        runs_within = request.runs_within_seconds or estimate["runtime_seconds"]
        expires_at = self.settings.reservation_expiry(now, runs_within)
        # Grown in the verdict's transaction on SQLite: the runtime then needs no second one before it runs
        # the action. (A pipelined PostgreSQL transaction sends only prepared statements, read-free.)
        grows = self.store.is_sqlite and runs_within > estimate["runtime_seconds"]
        attested = self.settings.attestation is not AttestationMode.OFF
        # Claims are made before the transaction, and used only if it reserves (they hold no database state).
        fresh = (
            self.attestor.issue(proposal_id, request.agent_id, request.action_type, request.target, now)
            if attested
            else None
        )
        over_share: list[bool] = []  # set when the agent's share, not the budget, refused the reservation
        lays_refusal = self.refusal_traces.due(request.agent_id, request.target, now)

        def work(connection: Connection, budget_last: bool) -> _Decided:
            laid = False
            reading = read_for_gate(connection, request.agent_id, request.target, period_now)
            if reading.lapsed(now):  # release lapsed reservations before the budget is weighed
                self.reservations.expire_due(connection, now)
                reading = read_for_gate(connection, request.agent_id, request.target, period_now)
            inputs = GateInputs(
                role=reading.role,
                trust=reading.trust,
                kind=kind,
                report=report,
                severity=severity,
                budget_approved=True,  # checked below: reserved on EXECUTE, else only looked at
                pressure=pressure(reading.strengths),
            )
            outcome = self.gate.decide(inputs)
            if request.require_approval and outcome.decision is Decision.EXECUTE:
                outcome = replace(
                    outcome,
                    decision=Decision.HOLD,
                    reason=f"{outcome.reason}; {request.approval_reason or 'a person must approve this call'}",
                    required_evidence=[*outcome.required_evidence, "human_approval"],
                )
            period, claims, approval = None, None, None
            grant = estimate
            if outcome.decision is Decision.EXECUTE and grows:
                name = "runtime_seconds"
                grant = self.reservations.grant(estimate, name, runs_within, reading.budget, reading.held_runtime)
            if outcome.decision is Decision.EXECUTE and budget_last:
                # The budget row is every process's hot spot: write the rest first and reserve last,
                # so its lock is held only until the commit (on PostgreSQL: while the server runs the
                # last batch). A budget that cannot cover the estimate undoes the whole transaction
                # (GuardFailed), and the verdict is made again below.
                period, claims = period_now, fresh
                store_proposal(connection, proposal_id, request, outcome, now, period, grant, claims, expires_at)
                if not reading.known_agent:
                    self.roles.ensure(connection, request.agent_id, now)  # or another process created it first
                counted = self.roles.counted(outcome.decision)
                self.shares.hold_or_abort(connection, request.agent_id, estimate, grant, counted)
                if reading.budget is None:
                    self.ledger.ensure_period(connection, period)
                self.ledger.reserve_or_abort(connection, estimate, period, grant)
            else:
                within_share = True
                if outcome.decision is Decision.EXECUTE:
                    if not reading.known_agent:
                        self.roles.ensure(connection, request.agent_id, now)
                    within_share = self.shares.hold(connection, request.agent_id, estimate, grant)
                    period = self.ledger.reserve(connection, estimate, now, grant) if within_share else None
                    approved = period is not None
                    if within_share and not approved:
                        self.shares.free(connection, request.agent_id, grant)
                else:
                    approved = self.ledger.covers(reading.budget, estimate)
                if not approved:
                    inputs = replace(inputs, budget_approved=False)
                    outcome = self.gate.decide(inputs)
                    if not within_share and self.ledger.covers(reading.budget, estimate):
                        over_share.append(True)
                        outcome = replace(
                            outcome,
                            reason=self.shares.refusal(estimate),
                            required_evidence=["report_outcomes_of_held_reservations", "reduce_budget_estimate"],
                        )
                elif period is not None:
                    claims = fresh
                backlog = outcome.decision is Decision.HOLD and self.approvals.full(connection, request.agent_id, now)
                if backlog:
                    outcome = replace(
                        outcome, decision=Decision.REFUSE, reason=backlog, required_evidence=[DECIDE_PENDING]
                    )
                # a refusal of the agent's backlog, not of the target, lays no trace there
                laid = outcome.decision is Decision.REFUSE and lays_refusal and not backlog
                store_proposal(connection, proposal_id, request, outcome, now, period, grant, claims, expires_at)
                # The agent's row was taken before the budget's when it reserved; counting it is one more update.
                self.roles.count_proposal(
                    connection, request.agent_id, outcome.decision, now, known=reading.known_agent
                )
                if laid:
                    evidence = {"proposal_id": proposal_id, "action_type": request.action_type}
                    deposit = Deposit(request.target, SignalType.FAILURE, source=SignalSource.AGENT, evidence=evidence)
                    self.pheromones.deposit(connection, deposit, now=now, tick=reading.tick)
                if outcome.decision is Decision.HOLD:
                    approval = self.approvals.open(connection, proposal_id, request, outcome, report, estimate, now)
            # The head of the audit log is locked last of all, after the budget row, and held until the commit.
            record = gate_record(
                request, outcome, proposal_id, inputs.budget_approved, approval.approval_id if approval else None
            )
            AuditLog.append(connection, [record], now, head=reading.audit_head if self.store.is_sqlite else None)
            held = grant["runtime_seconds"] if period is not None and grows else None
            return _Decided(outcome, inputs.budget_approved, claims, approval, held, laid)

        if self._budget_short_in != period_now:
            try:
                decided = self.store.run(lambda connection: work(connection, budget_last=True), pipelined=True)
            except GuardFailed:  # the reservation did not fit the budget or the agent's share
                self._budget_short_in = period_now  # until a reservation fits again in this period
                decided = None
        else:
            decided = None
        if decided is None:
            decided = self.store.run(lambda connection: work(connection, budget_last=False), pipelined=True)
            if (
                decided.outcome.decision is Decision.EXECUTE or over_share
            ):  # an agent's share says nothing of the budget
                self._budget_short_in = None
        outcome, approval = decided.outcome, decided.approval
        if decided.laid_trace:
            self.refusal_traces.laid(request.agent_id, request.target, now)
        return GateVerdict(  # signed after the commit: the transaction holds no lock while the token is made
            decision=outcome.decision,
            gate_score=outcome.gate_score,
            reason=outcome.reason,
            required_evidence=outcome.required_evidence,
            budget_approved=decided.budget_approved,
            falsification_severity=severity,
            proposal_id=proposal_id,
            authorization=self.attestor.sign(decided.claims) if decided.claims else None,
            approval_id=approval.approval_id if approval else None,
            approval_expires_at=approval.expires_at if approval else None,
            runtime_held=decided.runtime_held,
        )

    def authorization_for(self, proposal_id: str, request: ProposeActionRequest | Mapping[str, Any]) -> str | None:
        """The signed authorization of ``request``'s EXECUTE verdict again (extension), or None if it had none.

        A caller that keeps a verdict (a cached flow step) keeps it without the token and asks
        here when it runs the action; AttestationError when it was used, released or expired.
        """
        proposal_id = check_name(proposal_id, "proposal_id", 36)
        request = _coerce(ProposeActionRequest, request)
        now = self.clock()
        return self.store.run(
            lambda connection: self.attestor.reissue(
                connection, proposal_id, request.agent_id, request.action_type, request.target, now
            ),
            write=False,
        )

    # -- consequences ------------------------------------------------------------------------------

    def _claims(self, request: RecordOutcomeRequest, authorization: str | None, now: float) -> Claims | None:
        mode = self.settings.attestation
        if mode is AttestationMode.OFF:
            return None
        if authorization is None:
            if mode is AttestationMode.REQUIRED:
                raise AttestationError("attestation is required: pass the authorization of the EXECUTE verdict")
            return None
        return self.attestor.verify(authorization, request, now)

    def reserve_runtime(self, proposal_id: str, seconds: float) -> float | None:
        """Let an EXECUTE's reservation hold up to ``seconds`` of runtime, as far as the budget allows (extension).

        The runtime asks this before it runs an action, and kills the action once it has used
        what is returned (the runtime seconds its reservation now holds), so concurrent calls
        never use more than the period's ceiling between them. The growth stays within the
        agent's share, and the reservation stays open while the action may run (plus the
        lease, never past its authorization). None when the proposal holds no open reservation.
        """
        proposal_id = check_name(proposal_id, "proposal_id", 36)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < float("inf"):
            raise KernelInputError.for_field("seconds", f"{seconds!r} given", expected="a finite number >= 0")
        now = self.clock()
        lease = Lease(
            now + float(seconds) + self.settings.reservation_lease_seconds, self.settings.attestation_ttl_seconds
        )
        return self.store.run(
            lambda connection: self.reservations.grow(connection, proposal_id, "runtime_seconds", float(seconds), lease)
        )

    def record_outcome(
        self,
        request: RecordOutcomeRequest | Mapping[str, Any],
        authorization: str | None = None,
        *,
        reported_by: Reporter = Reporter.PERSON,
        measured: bool = False,
    ) -> OutcomeRecord:
        """Store an outcome, update trust and role, settle the budget and lay SUCCESS/FAILURE + DEPENDENCY.

        The report settles one reservation: the one its authorization names, or else the
        agent's oldest valid open reservation for the same action type and target (so an
        unattested report of an executed proposal releases its hold instead of leaking
        it). Without either, the usage it reports is charged to the current period.

        ``reported_by`` is who vouches for it, decided by the caller's authentication, never by
        the request: Colony's runtime, a person (the default, as the seed's operator reports) or
        the agent itself, whose word is recorded but may only lower its trust and lays no SUCCESS.

        ``measured`` says the usage was measured by the runtime that ran the action: what ran
        is recorded as what happened, so it is charged even past the period's ceiling (the
        overspend is flagged on the record and in the ledger), never refused after the fact.
        A caller's own usage report over a whole period's limit is refused as no usage at all.
        """
        request = _coerce(RecordOutcomeRequest, request)
        reported_by = _reporter(reported_by)
        if not measured:
            self._within_limits(request.usage(), "")
        now = self.clock()
        claims = self._claims(request, authorization, now)
        consequence_id = str(uuid.uuid4())

        evidence = {"consequence_id": consequence_id, "action_type": request.action_type}
        dependency = Deposit(
            request.target,
            SignalType.DEPENDENCY,
            source=SignalSource.RUNTIME,
            decay_rate=DecayRate.SLOW,
            evidence={"agent_id": request.agent_id, "action_type": request.action_type},
        )
        outcome_type = SignalType.SUCCESS if request.tests_passed else SignalType.FAILURE
        outcome = Deposit(request.target, outcome_type, source=SignalSource.TEST, evidence=evidence)
        believed = reported_by.may_raise_trust
        deposits = (dependency, outcome) if believed or not request.tests_passed else (dependency,)

        def work(connection: Connection) -> OutcomeRecord:
            # Rows are locked in one order everywhere (proposals, agent, traces, budget): no deadlocks.
            # The first three go out together; the writes then go out with the commit.
            proposal: dict[str, Any] | None = None
            if claims:
                consumed = Attestor.consume(connection, claims, now)
            else:
                proposal = self.reservations.match(
                    connection, request.agent_id, request.action_type, request.target, now
                )
            agent = self.roles.lock(connection, request.agent_id)
            traces = self.pheromones.lock_traces(connection, deposits)
            if claims:
                proposal = Attestor.consumed(connection, claims, consumed)
            before, after = self.roles.apply_outcome(
                connection,
                request.agent_id,
                request.tests_passed,
                request.human_feedback,
                now,
                agent,
                may_raise=believed,
                freed=held_by(proposal) if proposal is not None else None,  # a proposal is its agent's own
            )
            overspent = _overspent(request.usage(), held_by(proposal) if proposal is not None else None)
            ConsequenceMemory.store(
                connection,
                ConsequenceRecord(
                    consequence_id=consequence_id,
                    proposal_id=proposal["proposal_id"] if proposal else None,
                    agent_id=request.agent_id,
                    action_type=request.action_type,
                    target=request.target,
                    actual_outcome=request.actual_outcome + _overspend_note(overspent),
                    tests_passed=request.tests_passed,
                    human_feedback=request.human_feedback,
                    trust_before=before.trust,
                    trust_after=after.trust,
                    recorded_at=now,
                    reported_by=reported_by,
                ),
            )
            self.pheromones.deposit_traces(connection, deposits, traces, now=now)
            # The budget row is every process's hot spot: lock it last, so it is held the shortest time.
            if proposal is not None:
                self.ledger.settle(connection, proposal["period"], held_by(proposal), request.usage())
            else:
                self.ledger.charge(connection, request.usage(), now)
            return OutcomeRecord(
                consequence_id=consequence_id,
                trust_score=after.trust,
                role=after.role,
                attested=claims is not None,
                overspent=overspent,
            )

        return self.store.run(work, pipelined=True)

    # -- reads and upkeep --------------------------------------------------------------------------

    @staticmethod
    def _profile(connection: Connection, row: AgentRow) -> AgentProfile:
        return AgentProfile(
            agent_id=row.agent_id,
            role=row.role,
            trust_score=row.trust,
            total_proposals=row.total_proposals,
            accepted_proposals=row.accepted_proposals,
            consequence_history=ConsequenceMemory.history(connection, row.agent_id),
            last_updated=row.last_updated,
        )

    def agent_profile(self, agent_id: str) -> AgentProfile:
        """The agent's profile; an unknown agent reads as the default SANDBOX profile (trust 0.1), stored nowhere.

        Reading creates nothing: an agent is stored when it first proposes, reports or is given a trust.
        """
        agent_id = check_name(agent_id, "agent_id", 256)
        now = self.clock()

        def work(connection: Connection) -> AgentProfile:
            row = self.roles.get(connection, agent_id)
            if row is None:
                return AgentProfile(
                    agent_id=agent_id,
                    role=role_for(INITIAL_TRUST),
                    trust_score=INITIAL_TRUST,
                    total_proposals=0,
                    accepted_proposals=0,
                    consequence_history=[],
                    last_updated=now,
                )
            return self._profile(connection, row)

        return self.store.run(work, write=False)

    def find_profile(self, agent_id: str) -> AgentProfile | None:
        """The agent's profile, or None for an agent the kernel has never seen (extension: creates nothing)."""
        agent_id = check_name(agent_id, "agent_id", 256)

        def work(connection: Connection) -> AgentProfile | None:
            row = self.roles.get(connection, agent_id)
            return None if row is None else self._profile(connection, row)

        return self.store.run(work, write=False)

    def proposal_counts(self, agent_id: str) -> ProposalCounts:
        """The agent's proposals by state: total = accepted + rejected + held (extension; creates nothing)."""
        agent_id = check_name(agent_id, "agent_id", 256)
        row = self.store.run(lambda connection: self.roles.get(connection, agent_id), write=False)
        counts = row.counts if row is not None else None
        return ProposalCounts(
            agent_id=agent_id,
            total=counts.total if counts else 0,
            accepted=counts.accepted if counts else 0,
            rejected=counts.rejected if counts else 0,
            held=counts.held if counts else 0,
        )

    def consequence_log(self, agent_id: str) -> list[ConsequenceRecord]:
        """Every consequence the agent reported, oldest first (extension, for audits)."""
        agent_id = check_name(agent_id, "agent_id", 256)
        return self.store.run(lambda connection: ConsequenceMemory.all_for(connection, agent_id), write=False)

    def consequence(self, consequence_id: str) -> ConsequenceRecord | None:
        """One recorded consequence by its id, or None (extension, for a run's report)."""
        consequence_id = check_name(consequence_id, "consequence_id", 36)
        return self.store.run(lambda connection: ConsequenceMemory.get(connection, consequence_id), write=False)

    def consequence_of(self, proposal_id: str) -> ConsequenceRecord | None:
        """The history entry that settled a proposal (its outcome, refusal or expiry), or None (extension)."""
        proposal_id = check_name(proposal_id, "proposal_id", 64)
        return self.store.run(lambda connection: ConsequenceMemory.for_proposal(connection, proposal_id), write=False)

    def set_trust(self, agent_id: str, trust: float) -> AgentProfile:
        """Set an agent's trust, and so its role (extension: an operator's override)."""
        agent_id = check_name(agent_id, "agent_id", 256)
        if isinstance(trust, bool) or not isinstance(trust, int | float) or not 0.0 <= trust <= 1.0:
            raise KernelInputError.for_field("trust", f"{trust!r} given", expected="a number in [0, 1]")
        now = self.clock()
        self.store.run(lambda connection: self.roles.set_trust(connection, agent_id, float(trust), now))
        return self.agent_profile(agent_id)

    def status(self) -> ColonyStatus:
        """The dashboard snapshot (releasing lapsed reservations first, so ``reserved`` is what is really held)."""
        now = self.clock()
        lapsed = self.store.run(self.reservations.earliest_expiry, write=False)
        if lapsed is not None and lapsed <= now:
            return self.store.run(lambda connection: self._expired_then_snapshot(connection, now))
        return self.store.run(lambda connection: self.reporter.snapshot(connection, now), write=False)

    def _expired_then_snapshot(self, connection: Connection, now: float) -> ColonyStatus:
        self.reservations.expire_due(connection, now)
        return self.reporter.snapshot(connection, now)

    def pheromone_query(self, location: str, signal_type: SignalType | str) -> list[ColonySignal]:
        """The live trace at (location, signal_type): zero or one signal."""
        location = check_name(location, "location", 1024)
        kind = _signal_type(signal_type)
        return self.store.run(lambda connection: self.pheromones.sense(connection, location, kind), write=False)

    def deposit(
        self,
        location: str,
        signal_type: SignalType | str,
        amount: float = 1.0,
        *,
        source: SignalSource | str = SignalSource.AGENT,
        decay_rate: DecayRate | str | float = DecayRate.NORMAL,
        evidence: dict[str, Any] | None = None,
    ) -> ColonySignal:
        """Lay or reinforce a trace (extension: for people, scanners and runtimes that sense trouble)."""
        location = check_name(location, "location", 1024)
        kind = _signal_type(signal_type)
        if isinstance(amount, bool) or not isinstance(amount, int | float) or not 0 < amount <= 1000:
            raise KernelInputError.for_field("amount", f"{amount!r} given", expected="a number in (0, 1000]")
        try:
            origin = SignalSource(source)
        except ValueError:
            raise KernelInputError.for_field("source", f"unknown source {source!r}") from None
        rate = _decay_rate(decay_rate)
        deposit = Deposit(location, kind, float(amount), origin, rate, evidence)
        now = self.clock()

        def work(connection: Connection) -> ColonySignal:
            self.pheromones.deposit(connection, deposit, now=now)
            return self.pheromones.sense(connection, location, kind)[0]

        return self.store.run(work)

    def falsify_plan(self, plan_json: str) -> FalsificationReport:
        """Attack a JSON plan with the ten vectors (no gate, no state)."""
        return self.falsifier.falsify_json(plan_json)

    def pruning_report(self) -> PruningReport:
        """Nominate low-usage, stale or duplicate modules from the DEPENDENCY traces (advisory)."""
        now = self.clock()

        def work(connection: Connection) -> PruningReport:
            registry = [RegistryEntry(*trace) for trace in self.pheromones.dependency_traces(connection)]
            candidates = self.pruner.scan(registry, now)
            StatusReporter.remember_pruning(connection, len(candidates))
            return PruningReport(candidates=candidates, total_candidates=len(candidates), generated_at=now)

        return self.store.run(work)

    def tick(self, key: str | None = None) -> ColonyStatus:
        """Advance one tick: release lapsed reservations, expire overdue approvals, evaporate; return the status.

        Args:
            key: The scheduled run's identity (its id or scheduled time). A tick with a key
                already applied returns the status without advancing again, so a retried
                run ticks once. ``None`` always advances.
        """
        if key is not None:
            key = check_name(key, "key", 256)
        now = self.clock()

        def work(connection: Connection) -> ColonyStatus:
            if key is not None and not TickKeys.claim(connection, key, now):
                return self.reporter.snapshot(connection, now)
            self.reservations.expire_due(connection, now)
            expired = self.approvals.expire_due(connection, now)
            tick = self.pheromones.evaporate(connection)
            if key is not None:
                TickKeys.applied(connection, key, tick)
            self.approvals.audit_expired(connection, expired, now)  # the audit head last
            return self.reporter.snapshot(connection, now)

        return self.store.run(work)
