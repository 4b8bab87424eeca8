"""The kernel's enums and its request/response models, shaped exactly as seed 001's schemas.

Every model raises :class:`~colony.errors.KernelInputError` (naming the field) instead of
pydantic's ``ValidationError``, so bad input reads the same from Python, MCP and the CLI.
"""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
)

from colony.errors import FieldError, KernelInputError
from colony.kernel.actions import ActionKind
from colony.kernel.checks import (
    MAX_AMOUNT,
    check_estimate,
    check_text,
    parse_json_object,
)
from colony.kernel.plan_fields import check_plan_fields

__all__ = [
    "AgentProfile",
    "Approval",
    "ApprovalClaim",
    "ApprovalFinding",
    "ApprovalState",
    "AttackVector",
    "AttestationMode",
    "BudgetDimension",
    "ColonySignal",
    "ColonyStatus",
    "ConsequenceKind",
    "ConsequenceRecord",
    "DecayRate",
    "Decision",
    "FalsificationFinding",
    "FalsificationReport",
    "GateVerdict",
    "OutcomeRecord",
    "PheromoneSummary",
    "ProposalCounts",
    "ProposeActionRequest",
    "PruningCandidate",
    "PruningReport",
    "RecordOutcomeRequest",
    "Role",
    "Severity",
    "SignalSource",
    "SignalSummary",
    "SignalType",
    "reviewer_label",
]

MAX_ID = 256
MAX_TEXT = 10_000
MAX_EVIDENCE = 100_000


class Decision(StrEnum):
    """The actuation gate's verdict."""

    EXECUTE = "execute"
    HOLD = "hold"
    REFUSE = "refuse"


class SignalType(StrEnum):
    """What a pheromone trace says about its location."""

    FAILURE = "failure"
    SUCCESS = "success"
    RISK = "risk"
    NEED = "need"
    DEPENDENCY = "dependency"
    HUMAN_PRIORITY = "human_priority"


class SignalSource(StrEnum):
    """Who laid a trace."""

    TEST = "test"
    HUMAN = "human"
    AGENT = "agent"
    SECURITY = "security"
    RUNTIME = "runtime"


class DecayRate(float, Enum):
    """Per-trace evaporation multiplier of the base rate (one NORMAL tick keeps 90%)."""

    FAST = 3.0
    NORMAL = 1.0
    SLOW = 0.2


class Role(StrEnum):
    """An agent's role, earned by trust; ordered from least to most trusted."""

    SANDBOX = "sandbox"
    REPAIR_ANT = "repair_ant"
    MEMORY_ANT = "memory_ant"
    DISPATCHER = "dispatcher"
    GUARD_ANT = "guard_ant"


class AttestationMode(StrEnum):
    """Whether an outcome report must carry the authorization of its EXECUTE verdict."""

    OFF = "off"
    OPTIONAL = "optional"
    REQUIRED = "required"


class Severity(StrEnum):
    """How bad a falsification finding is."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class AttackVector(StrEnum):
    """The ten ways the falsification worker attacks a plan."""

    DEPENDENCY_RISK = "dependency_risk"
    SECURITY_RISK = "security_risk"
    CIRCULAR_ARCHITECTURE = "circular_architecture"
    FALSE_METRIC = "false_metric"
    OVER_BROAD_MODULE = "over_broad_module"
    HIDDEN_MAINTENANCE_COST = "hidden_maintenance_cost"
    NO_ROLLBACK = "no_rollback"
    NO_TEST_VALUE = "no_test_value"
    SCOPE_CREEP = "scope_creep"
    PREMATURE_ABSTRACTION = "premature_abstraction"


def _input_error(error: ValidationError, model: str) -> KernelInputError:
    fields = []
    for item in error.errors():
        raised = item.get("ctx", {}).get("error")
        if isinstance(raised, KernelInputError):  # raised by our own check, already naming its field
            fields.extend(raised.errors)
            continue
        field = ".".join(str(part) for part in item["loc"]) or model
        fields.append(FieldError(field=field, message=item["msg"]))
    summary = "; ".join(f"{f.field}: {f.message}" for f in fields)
    return KernelInputError(f"invalid {model}: {summary}", errors=fields)


class ConsequenceKind(StrEnum):
    """What put an entry in an agent's history."""

    OUTCOME = "outcome"
    EXPIRY = "expiry"
    REJECTION = "rejection"


class Reporter(StrEnum):
    """Who vouched for an outcome: only what Colony observed or an authenticated person said may raise trust."""

    RUNTIME = "runtime"  # Colony ran the action and measured what happened
    PERSON = "person"  # an operator or a kernel:approve principal other than the agent
    AGENT = "agent"  # the agent's own word: recorded, never believed upward

    @property
    def may_raise_trust(self) -> bool:
        """Whether an outcome vouched for this way can move trust (or a SUCCESS trace) upward."""
        return self is not Reporter.AGENT


class KernelModel(BaseModel):
    """Base of the kernel's models: strict keys, described fields, KernelInputError on bad input."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            raise _input_error(error, type(self).__name__) from None

    # Only translates errors: tell pydantic not to route model_validate through this __init__.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate ``obj``, raising KernelInputError naming every field at fault."""
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as error:
            raise _input_error(error, cls.__name__) from None


class _Request(KernelModel):
    """A request: no text field may hold a NUL character."""

    def model_post_init(self, context: Any, /) -> None:
        """Refuse a NUL character in any text field (KernelInputError naming the field)."""
        for name, value in self.__dict__.items():
            if isinstance(value, str) and "\x00" in value:
                check_text(value, name)


class ProposeActionRequest(_Request):
    """colony_propose_action's input (plus optional in-process extensions)."""

    agent_id: str = Field(min_length=1, max_length=MAX_ID, description="The proposing agent.")
    action_type: str = Field(min_length=1, max_length=MAX_ID, description="What kind of action, e.g. 'patch_file'.")
    target: str = Field(min_length=1, max_length=1024, description="Dotted module path or file path affected.")
    rationale: str = Field(max_length=MAX_TEXT, description="Why the action is needed (>= 20 characters).")
    rollback_plan: str = Field(max_length=MAX_TEXT, description="How to undo the action.")
    evidence: str = Field(default="{}", max_length=MAX_EVIDENCE, description="JSON object of supporting evidence.")
    side_effecting: bool | None = Field(
        default=None,
        description="Extension: True makes a read-only action_type count as a write; False changes nothing "
        "(a caller may raise the risk of its own proposal, never lower it).",
    )
    kind: ActionKind | None = Field(
        default=None,
        description="Extension: the action's kind as the caller knows it (a tool's catalog spec); counts only "
        "when higher than the kind of action_type.",
    )
    budget_estimate: dict[str, float] | None = Field(
        default=None,
        description="Extension: resources to reserve, e.g. {'llm_calls': 1, 'runtime_seconds': 2.0}; finite, "
        "at most the period's limit.",
    )
    runs_within_seconds: float | None = Field(
        default=None,
        gt=0,
        le=86400,
        description="Extension: how long the work may run once authorized; an EXECUTE's reservation grows "
        "toward it as far as the budget and the agent's share allow (see runtime_held), and is released that "
        "long plus the reservation lease after the verdict, if no outcome settles it (default: the estimate's "
        "runtime_seconds).",
    )
    tool: str | None = Field(
        default=None,
        max_length=MAX_ID,
        description="Extension: the tool the action runs in, as an approval names it (default: the target).",
    )
    require_approval: bool = Field(
        default=False,
        description="Extension: a person must approve even an EXECUTE (an agent spec's `tool_approval: required`); "
        "it can only turn EXECUTE into HOLD.",
    )
    approval_reason: str | None = Field(
        default=None,
        max_length=2000,
        description="Extension: why a person must approve it (with require_approval), as the reviewer reads it; "
        "e.g. the operator's policies that hold the call.",
    )
    acted_by: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID,
        description="Extension: the operator who acted for agent_id, as the audit log names it; set by the call "
        "pipeline from the authenticated principal, never taken from a caller.",
    )
    policy: dict[str, Any] | None = Field(
        default=None,
        description="Extension: what the operators' policies decided before the gate, as the audit log records "
        "it; set by the call pipeline, never taken from a caller (an evidence key of that name is only evidence).",
    )

    _evidence: dict[str, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        """Parse the evidence once (a JSON object whose plan keys have their types, or KernelInputError)."""
        super().model_post_init(context)
        self._evidence = parse_json_object(self.evidence, "evidence")
        check_plan_fields(self._evidence, "evidence.", strings=False)

    @field_validator("budget_estimate")
    @classmethod
    def _estimate_known(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is not None:
            check_estimate(value)
        return value

    def evidence_dict(self) -> dict[str, Any]:
        """The evidence, parsed (a copy)."""
        return dict(self._evidence)


class GateVerdict(KernelModel):
    """colony_propose_action's output; ``proposal_id`` and ``authorization`` are extensions."""

    decision: Decision = Field(description="Gate verdict.")
    gate_score: float = Field(ge=0.0, le=1.0, description="Composite gate score; higher is better.")
    reason: str = Field(description="Human-readable explanation of the decision.")
    required_evidence: list[str] = Field(default_factory=list, description="What to do before re-submitting.")
    budget_approved: bool = Field(description="Whether the ledger cleared the budget estimate.")
    falsification_severity: float = Field(ge=0.0, le=1.0, description="Maximum falsification weight; 0 = none.")
    proposal_id: str | None = Field(default=None, description="Extension: the stored proposal's id.")
    authorization: str | None = Field(default=None, description="Extension: signed token, present on EXECUTE.")
    approval_id: str | None = Field(default=None, description="Extension: the approval request a HOLD opened.")
    approval_expires_at: float | None = Field(
        default=None, description="Extension: when that approval request lapses undecided (unix time)."
    )

    runtime_held: float | None = Field(
        default=None,
        description="Extension: the runtime seconds an EXECUTE's reservation holds, grown toward the request's "
        "runs_within_seconds as far as the budget and the agent's share allow (the action's deadline); absent "
        "when not grown at the verdict (ask reserve_runtime).",
    )

    def seed_dict(self) -> dict[str, Any]:
        """Exactly seed 001's output keys (for MCP)."""
        return self.model_dump(
            mode="json",
            exclude={"proposal_id", "authorization", "approval_id", "approval_expires_at", "runtime_held"},
        )


class RecordOutcomeRequest(_Request):
    """colony_record_outcome's input (plus the actual usage to settle, as extensions)."""

    agent_id: str = Field(min_length=1, max_length=MAX_ID, description="Agent reporting the outcome.")
    action_type: str = Field(min_length=1, max_length=MAX_ID, description="Action type of the report.")
    target: str = Field(min_length=1, max_length=1024, description="Target of the report.")
    actual_outcome: str = Field(max_length=MAX_TEXT, description="What happened.")
    tests_passed: bool = Field(description="Post-action test status.")
    human_feedback: float = Field(default=0.0, ge=-1.0, le=1.0, description="Operator feedback in [-1, 1].")
    runtime_seconds: float | None = Field(
        default=None, ge=0, le=MAX_AMOUNT, allow_inf_nan=False, description="Extension: runtime actually used."
    )
    llm_calls: float | None = Field(
        default=None, ge=0, le=MAX_AMOUNT, allow_inf_nan=False, description="Extension: LLM calls actually used."
    )

    def usage(self) -> dict[str, float]:
        """The actual usage reported, by ledger dimension (only the dimensions given)."""
        reported = {"llm_calls": self.llm_calls, "runtime_seconds": self.runtime_seconds}
        return {name: amount for name, amount in reported.items() if amount is not None}


class OutcomeRecord(KernelModel):
    """colony_record_outcome's output; ``attested`` is an extension."""

    status: Literal["recorded"] = Field(default="recorded", description="Always 'recorded' on success.")
    consequence_id: str = Field(description="UUID of the stored consequence.")
    trust_score: float = Field(ge=0.0, le=1.0, description="The agent's trust after the update.")
    role: Role = Field(description="The agent's role after the update.")
    attested: bool = Field(default=False, description="Extension: whether a valid authorization was consumed.")
    overspent: dict[str, float] = Field(
        default_factory=dict,
        description="Extension: usage past what the call's reservation held, by dimension (empty when none).",
    )

    def seed_dict(self) -> dict[str, Any]:
        """Exactly seed 001's output keys (for MCP)."""
        return self.model_dump(mode="json", exclude={"attested", "overspent"})


class AgentProfile(KernelModel):
    """colony_agent_profile's output."""

    agent_id: str = Field(description="The agent.")
    role: Role = Field(description="Current role.")
    trust_score: float = Field(ge=0.0, le=1.0, description="Current trust.")
    total_proposals: int = Field(ge=0, description="Proposals submitted.")
    accepted_proposals: int = Field(ge=0, description="Outcomes with tests passed and no negative feedback.")
    consequence_history: list[str] = Field(description="Consequence ids, oldest first; at most 200.")
    last_updated: float = Field(description="Unix time of the last trust update.")


class ColonySignal(KernelModel):
    """One pheromone trace, as colony_pheromone_query returns it."""

    location: str = Field(description="Where the trace lies.")
    signal_type: SignalType = Field(description="What it says.")
    strength: float = Field(ge=0.0, description="Current strength, after evaporation.")
    decay_rate: float = Field(description="Evaporation multiplier (3.0, 1.0 or 0.2).")
    source: SignalSource = Field(description="Who laid it last.")
    evidence: dict[str, Any] = Field(description="What the last deposit carried.")
    last_reinforced: float = Field(description="Unix time of the last deposit.")


class SignalSummary(KernelModel):
    """One entry of the status's top signals."""

    key: str = Field(description="'{location}:{signal_type}'.")
    location: str = Field(description="Where the trace lies.")
    signal_type: SignalType = Field(description="What it says.")
    strength: float = Field(description="Current strength.")
    updated_at: float = Field(description="Unix time of the last deposit.")


class PheromoneSummary(KernelModel):
    """The field at a glance."""

    total_signals: int = Field(ge=0, description="Live traces in the field.")
    top_signals: list[SignalSummary] = Field(description="Top 10 by current strength.")


class BudgetDimension(KernelModel):
    """One ledger dimension in the current period (``reserved`` and ``expired`` shown when not zero)."""

    used: float = Field(description="Settled usage (reservations in flight not included).")
    reserved: float = Field(default=0.0, description="Extension: held by EXECUTE verdicts awaiting their outcome.")
    expired: float = Field(default=0.0, description="Extension: released this period by expired reservations.")
    max: float = Field(description="The period's ceiling.")
    overspent: float = Field(
        default=0.0, description="Extension: settled usage past the ceiling (measured work is charged, never refused)."
    )

    @model_serializer(mode="wrap")
    def _shown(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        optional = ("reserved", "expired", "overspent")
        return {key: value for key, value in dumped.items() if key not in optional or value}


class ConsequenceRecord(KernelModel):
    """One entry of an agent's history: an outcome report, or a reservation that expired without one."""

    consequence_id: str = Field(description="UUID.")
    proposal_id: str | None = Field(
        description="The proposal the entry settles: attested, matched to its open reservation, or expired."
    )
    agent_id: str = Field(description="Reporting agent.")
    action_type: str = Field(description="Action type reported.")
    target: str = Field(description="Target reported.")
    actual_outcome: str = Field(description="What happened.")
    tests_passed: bool = Field(description="Post-action test status.")
    human_feedback: float = Field(description="Operator feedback.")
    trust_before: float = Field(description="Trust before this report.")
    trust_after: float = Field(description="Trust after this report.")
    recorded_at: float = Field(description="Unix time.")
    kind: ConsequenceKind = Field(
        default=ConsequenceKind.OUTCOME,
        description="Extension: 'outcome' (a report), 'expiry' (no report or no decision came) or 'rejection' "
        "(a person rejected the held proposal).",
    )
    reported_by: Reporter = Field(
        default=Reporter.AGENT,
        description="Extension: who vouched for the entry: 'runtime' (Colony ran it), 'person' (an operator or "
        "reviewer) or 'agent' (the agent's own word, which never raises trust).",
    )


class ProposalCounts(KernelModel):
    """An agent's proposals by state; ``total == accepted + rejected + held`` always (seed 001)."""

    agent_id: str = Field(description="The agent.")
    total: int = Field(ge=0, description="Proposals submitted (the profile's total_proposals).")
    accepted: int = Field(ge=0, description="Proposals whose outcome passed (the profile's accepted_proposals).")
    rejected: int = Field(ge=0, description="Refused, expired without an outcome, or with a failed outcome.")
    held: int = Field(ge=0, description="Held or executed, awaiting an outcome.")


class ColonyStatus(KernelModel):
    """colony_status's (and colony_tick's) output."""

    tick_count: int = Field(ge=0, description="Ticks elapsed.")
    pheromone_summary: PheromoneSummary = Field(description="The field.")
    budget_usage: dict[str, BudgetDimension] = Field(description="Current period usage per dimension.")
    role_distribution: dict[str, int] = Field(description="Agents per role.")
    recent_consequences: list[ConsequenceRecord] = Field(description="Last 10 consequences, newest first.")
    pruning_candidates_count: int = Field(ge=0, description="Candidates in the last pruning report.")


class FalsificationFinding(KernelModel):
    """One attack on a plan that succeeded."""

    claim: str = Field(description="The assumption attacked.")
    attack_vector: AttackVector = Field(description="Which of the ten vectors.")
    severity: Severity = Field(description="How bad.")
    evidence: dict[str, Any] = Field(description="What in the plan tripped it.")
    remediation: str = Field(description="How to address it.")


class FalsificationReport(KernelModel):
    """colony_falsify_plan's output."""

    findings: list[FalsificationFinding] = Field(description="Findings, in vector order.")
    severity_score: float = Field(ge=0.0, le=1.0, description="Mean severity weight; 0 = no findings.")
    recommendation: Decision = Field(description="execute < 0.4 <= hold < 0.75 <= refuse.")


class PruningCandidate(KernelModel):
    """A module the pruning daemon nominates."""

    module_path: str = Field(description="Location of a DEPENDENCY trace.")
    last_used: float = Field(description="Unix time of the trace's last deposit.")
    call_count: int = Field(ge=0, description="DEPENDENCY deposits at the location.")
    duplicate_of: str | None = Field(description="The module this one appears to copy, if any.")
    reason: str = Field(description="Why it is nominated.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence; only >= 0.50 is reported.")


class PruningReport(KernelModel):
    """colony_pruning_report's output."""

    candidates: list[PruningCandidate] = Field(description="Sorted by confidence, highest first.")
    total_candidates: int = Field(ge=0, description="len(candidates).")
    generated_at: float = Field(description="Unix time.")


class ApprovalState(StrEnum):
    """Where an approval request stands; only ``pending`` can change, and only once."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


class ApprovalFinding(KernelModel):
    """A falsification finding as a reviewer reads it."""

    attack_vector: AttackVector = Field(description="Which vector objected.")
    severity: Severity = Field(description="How bad.")
    claim: str = Field(description="The assumption attacked.")
    remediation: str = Field(description="How to address it.")


def reviewer_label(reviewer: str | None, display_name: str | None) -> str | None:
    """``carol (as ceo@corp)``: the authenticated reviewer first, a display name only beside it."""
    if reviewer is None or not display_name or display_name == reviewer:
        return reviewer
    return f"{reviewer} (as {display_name})"


class Approval(KernelModel):
    """A held proposal waiting for (or decided by) a person: everything a reviewer needs to judge it."""

    approval_id: str = Field(description="UUID of the request.")
    proposal_id: str = Field(description="The held proposal.")
    agent_id: str = Field(description="The agent that asked.")
    tool: str = Field(description="The tool the action runs in (the proposal's target for a bare kernel proposal).")
    action: str = Field(description="The action (the proposal's action_type).")
    target: str = Field(description="The proposal's target.")
    arguments_digest: str = Field(description="sha256 of the action's arguments as canonical JSON.")
    arguments: str | None = Field(
        default=None,
        description="The action's arguments as JSON, declared secrets redacted, cut at 16,384 characters "
        "(marked when cut): what the reviewer approves.",
    )
    gate_score: float = Field(ge=0.0, le=1.0, description="The gate's score.")
    findings: list[ApprovalFinding] = Field(description="The falsification findings the gate weighed.")
    required_evidence: list[str] = Field(description="What would let the gate decide alone.")
    reason: str = Field(description="Why the gate held the proposal.")
    requested_at: float = Field(description="Unix time of the HOLD.")
    expires_at: float = Field(description="Unix time after which the request lapses undecided.")
    state: ApprovalState = Field(description="pending, approved, rejected or expired.")
    reviewer: str | None = Field(
        default=None, description="The authenticated principal that decided (None while pending or when it expired)."
    )
    reviewer_display_name: str | None = Field(
        default=None, description="The name the reviewer gave, shown beside the reviewer, never instead."
    )
    note: str | None = Field(default=None, description="The reviewer's note.")
    decided_at: float | None = Field(default=None, description="Unix time of the decision or the expiry.")
    executed_at: float | None = Field(
        default=None, description="Unix time the approved call claimed its authorization (once only)."
    )
    flow_run_id: str | None = Field(default=None, description="The Prefect flow run waiting on this request, if any.")

    @property
    def decided_by(self) -> str | None:
        """Who decided, as messages name them: the principal, with the display name beside it."""
        return reviewer_label(self.reviewer, self.reviewer_display_name)


class ApprovalClaim(KernelModel):
    """An approved request handed to the call it approves: once only."""

    approval: Approval = Field(description="The request, now claimed.")
    authorization: str | None = Field(
        description="The signed one-time authorization bound to the proposal (None when attestation is off)."
    )
