"""The actuation gate: one verdict from trust, falsification, budget and pheromone pressure.

Pure: the kernel gathers the inputs inside its transaction and acts on the verdict.
``gate_score = 0.45 * trust + 0.35 * (1 - falsification_severity) + 0.20 * (1 - pressure)``,
where pressure is the target's FAILURE + RISK strength against its SUCCESS strength.
Hard rules come first: a SANDBOX agent never passes a write-path gate, a plan the
falsification worker would refuse (or any critical finding) is refused, and so is a plan
the budget cannot carry. Otherwise EXECUTE needs the score and no high finding; HOLD
names what to bring back; below the hold line the gate refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from colony.kernel.actions import ActionKind
from colony.kernel.models import Decision, FalsificationReport, Role, Severity, SignalType

__all__ = ["EXECUTE_THRESHOLD", "HOLD_THRESHOLD", "ActuationGate", "GateInputs", "GateOutcome", "pressure"]

TRUST_WEIGHT = 0.45
FALSIFICATION_WEIGHT = 0.35
PRESSURE_WEIGHT = 0.20
EXECUTE_THRESHOLD = 0.55
HOLD_THRESHOLD = 0.30
SANDBOX_REASON = "SANDBOX role: no write-path gate passes"
SANDBOX_EVIDENCE = ["earn_higher_role_via_trust_growth", "accumulate_accepted_proposals"]


def pressure(strengths: dict[SignalType, float]) -> float:
    """Warning pressure at a location in [0, 1): (failure + risk) / (failure + risk + success + 1)."""
    warning = strengths.get(SignalType.FAILURE, 0.0) + strengths.get(SignalType.RISK, 0.0)
    return warning / (warning + strengths.get(SignalType.SUCCESS, 0.0) + 1.0)


@dataclass(frozen=True)
class GateInputs:
    """Everything the gate weighs."""

    role: Role
    trust: float
    kind: ActionKind
    report: FalsificationReport
    severity: float
    budget_approved: bool
    pressure: float


@dataclass(frozen=True)
class GateOutcome:
    """The gate's verdict before it is stored."""

    decision: Decision
    gate_score: float
    reason: str
    required_evidence: list[str] = field(default_factory=list)


class ActuationGate:
    """Turns :class:`GateInputs` into a :class:`GateOutcome`."""

    @staticmethod
    def score(inputs: GateInputs) -> float:
        """The composite score in [0, 1]."""
        raw = (
            TRUST_WEIGHT * inputs.trust
            + FALSIFICATION_WEIGHT * (1.0 - inputs.severity)
            + PRESSURE_WEIGHT * (1.0 - inputs.pressure)
        )
        return round(min(1.0, max(0.0, raw)), 4)

    def decide(self, inputs: GateInputs) -> GateOutcome:
        """The verdict: hard refusals first, then the score against the thresholds."""
        if inputs.role is Role.SANDBOX and inputs.kind.side_effecting:
            return GateOutcome(Decision.REFUSE, 0.0, SANDBOX_REASON, list(SANDBOX_EVIDENCE))
        score = self.score(inputs)
        findings = inputs.report.findings
        critical = [f.attack_vector.value for f in findings if f.severity is Severity.CRITICAL]
        if critical or inputs.report.recommendation is Decision.REFUSE:
            vectors = critical or [f.attack_vector.value for f in findings]
            return GateOutcome(
                Decision.REFUSE,
                score,
                f"falsification refuses the plan ({', '.join(vectors)})",
                [f"resolve_{vector}" for vector in vectors],
            )
        if not inputs.budget_approved:
            return GateOutcome(
                Decision.REFUSE,
                score,
                "budget exhausted: the estimate does not fit this period's remaining budget",
                ["wait_for_budget_period_rollover", "reduce_budget_estimate"],
            )
        blocking = [f.attack_vector.value for f in findings if f.severity is Severity.HIGH]
        if score >= EXECUTE_THRESHOLD and not blocking:
            return GateOutcome(Decision.EXECUTE, score, f"gate passed (score {score:.2f})")
        if score >= HOLD_THRESHOLD:
            evidence = [f"resolve_{f.attack_vector.value}" for f in findings]
            if inputs.pressure >= 0.5:
                evidence.append("investigate_failure_signals_at_target")
            if not evidence:
                evidence.append("human_approval")
            why = (
                f"high findings: {', '.join(blocking)}" if blocking else f"score {score:.2f} below {EXECUTE_THRESHOLD}"
            )
            return GateOutcome(Decision.HOLD, score, f"hold for evidence ({why})", evidence)
        return GateOutcome(
            Decision.REFUSE,
            score,
            f"gate score {score:.2f} below the hold threshold {HOLD_THRESHOLD}",
            ["earn_higher_role_via_trust_growth", "clear_failure_signals_at_target"],
        )
