"""The falsification worker: ten attack vectors against a plan, each a small documented rule.

Each rule reads the plan's recognised keys (``action_type``, ``target``, ``rationale``,
``evidence``, ``rollback_plan``, ``budget_estimate``, ``agent_id``, and the keys the
remediations ask for: ``tests``, ``scope``, ``dependencies``, ``imports``, ``owner``,
``metrics``, ``callers``, ``sandbox``, ``security_review``) and returns at most one
finding. ``colony/kernel/README.md`` lists every rule with a plan that trips it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import re2

from colony.errors import KernelInputError
from colony.kernel.actions import ActionKind, classify_action, segments
from colony.kernel.checks import check_estimate, parse_json_object
from colony.kernel.dangers import scan_plan
from colony.kernel.models import (
    AttackVector,
    Decision,
    FalsificationFinding,
    FalsificationReport,
    Severity,
)
from colony.kernel.plan_fields import check_plan_fields

__all__ = ["SEVERITY_WEIGHTS", "FalsificationWorker", "recommendation_for"]

SEVERITY_WEIGHTS = {Severity.LOW: 0.05, Severity.MEDIUM: 0.20, Severity.HIGH: 0.45, Severity.CRITICAL: 1.0}
MAX_PLAN_CHARS = 100_000
MIN_RATIONALE = 20
ABSENT = "<key absent>"
MANIFESTS = frozenset(
    {"requirements.txt", "pyproject.toml", "setup.py", "setup.cfg", "package.json", "Pipfile", "go.mod", "Cargo.toml"}
)
DEPENDENCY_WORDS = ("dependency", "dependencies", "install", "upgrade", "vendor", "requirement")
SENSITIVE_SEGMENTS = frozenset({"auth", "crypto", "secrets", "credentials", "security", "permissions", ".ssh", ".env"})
CODE_EXECUTION = frozenset({"exec_code", "execute_code", "run_shell", "shell", "eval"})
TEXT_FIELDS = ("action_type", "target", "rationale", "rollback_plan")
PATH_SEPARATOR = re.compile(r"[/\\]")
SEGMENT_SEPARATOR = re.compile(r"[./\\]")
BARE_NAME = re.compile(r"[A-Za-z_]\w*")
# On RE2, in linear time: on Python's re, a rationale of 20,000 digits backtracked for 19 s (quadratic).
METRIC_CLAIM = re2.compile(
    r"(?i)\b(faster|slower|speed\s?up|reduc\w*|improv\w*|increas\w*|decreas\w*|cuts?|saves?|boost\w*)\b"
    r".{0,60}?\d+(\.\d+)?\s*(%|x\b|times|percent|ms\b)"
    r"|\d+(\.\d+)?\s*(%|x\b|times|percent)\s*(faster|slower|fewer|less|more|smaller|better)"
)
ABSTRACTION = re.compile(
    r"(?i)\b(abstract\w*|framework|generic|base[ _]class|plugin[ _](system|architecture)|factory)\b"
)
ABSTRACTION_WORDS = ("abstract", "framework", "generic", "base", "plugin", "factory")
HAS_DIGIT = re.compile(r"\d")
CREATING_VERBS = ("add", "create", "new", "vendor", "generate", "scaffold", "introduce", "install")


def recommendation_for(score: float) -> Decision:
    """Execute below 0.4, hold below 0.75, refuse at or above."""
    if score < 0.4:
        return Decision.EXECUTE
    return Decision.HOLD if score < 0.75 else Decision.REFUSE


def _present(plan: dict[str, Any], key: str) -> bool:
    value = plan.get(key)
    return value not in (None, "", [], {}) and not (isinstance(value, str) and not value.strip())


def _finding(
    vector: AttackVector, severity: Severity, claim: str, evidence: dict[str, Any], remediation: str
) -> FalsificationFinding:
    return FalsificationFinding(
        claim=claim, attack_vector=vector, severity=severity, evidence=evidence, remediation=remediation
    )


Rule = Callable[[dict[str, Any], ActionKind, bool], FalsificationFinding | None]


def _dependency_risk(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    action, target = plan.get("action_type", "").lower(), plan.get("target", "")
    touches = any(word in action for word in DEPENDENCY_WORDS) or PATH_SEPARATOR.split(target)[-1] in MANIFESTS
    if not touches or not kind.side_effecting:
        return None
    dependencies = plan.get("dependencies")
    if isinstance(dependencies, dict) and dependencies:
        unpinned = sorted(name for name, version in dependencies.items() if not str(version).startswith("=="))
        if not unpinned:
            return None
        evidence: dict[str, Any] = {"unpinned": unpinned}
    else:
        evidence = {"dependencies": dependencies if dependencies is not None else ABSENT}
    return _finding(
        AttackVector.DEPENDENCY_RISK,
        Severity.MEDIUM,
        "every added or upgraded dependency is known and pinned",
        evidence,
        "List each added or upgraded package in a `dependencies` map with an exact version, "
        'e.g. {"httpx": "==0.27.2"}.',
    )


def _security_risk(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    found = scan_plan(plan, TEXT_FIELDS)
    if found is not None and found[2] == "doubt":
        field, name, _ = found
        return _finding(
            AttackVector.SECURITY_RISK,
            Severity.HIGH,
            "every command in the plan can be judged before it runs",
            {"field": field, "could_not_judge": name},
            f"`{field}` could not be judged ({name}); spell the commands out plainly.",
        )
    if found is not None:
        field, name, _ = found
        return _finding(
            AttackVector.SECURITY_RISK,
            Severity.CRITICAL,
            "the plan does nothing that weakens the system's security",
            {"field": field, "pattern": name},
            f"Remove the {name} from `{field}`; do the step with least privilege and no inline secrets.",
        )
    action, target = plan.get("action_type", "").lower(), plan.get("target", "").lower()
    if action in CODE_EXECUTION and plan.get("sandbox") is not True:
        return _finding(
            AttackVector.SECURITY_RISK,
            Severity.HIGH,
            "arbitrary code runs isolated from the host",
            {"action_type": action, "sandbox": plan.get("sandbox", ABSENT)},
            "Run the code in the sandbox and say so with `sandbox: true`.",
        )
    parts = set(SEGMENT_SEPARATOR.split(target)) | {part for part in PATH_SEPARATOR.split(target) if part}
    sensitive = sorted(parts & SENSITIVE_SEGMENTS)
    if sensitive and kind.side_effecting and not _present(plan, "security_review"):
        return _finding(
            AttackVector.SECURITY_RISK,
            Severity.HIGH,
            "a change to security-sensitive code has been reviewed for security",
            {"target": plan.get("target", ""), "sensitive": sensitive},
            "Add a `security_review` naming who reviewed the change and what they checked.",
        )
    return None


def _circular_architecture(plan: dict[str, Any], _kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    imports, target = plan.get("imports"), plan.get("target", "")
    if not isinstance(imports, list) or not target:
        return None
    cyclic = sorted(str(name) for name in imports if name == target or target.startswith(f"{name}."))
    if not cyclic:
        return None
    return _finding(
        AttackVector.CIRCULAR_ARCHITECTURE,
        Severity.HIGH if target in cyclic else Severity.MEDIUM,
        "the change keeps the module graph acyclic",
        {"target": target, "cyclic_imports": cyclic},
        "Do not import the target or a package that contains it; move the shared code to a lower module.",
    )


def _false_metric(plan: dict[str, Any], _kind: ActionKind, proposal: bool) -> FalsificationFinding | None:
    rationale = plan.get("rationale", "")
    if (
        HAS_DIGIT.search(rationale)
        and METRIC_CLAIM.search(rationale)
        and not (_present(plan, "metrics") or _present(plan, "benchmark"))
    ):
        return _finding(
            AttackVector.FALSE_METRIC,
            Severity.MEDIUM,
            "the claimed improvement is measured",
            {"rationale": rationale, "metrics": ABSENT},
            "Add `metrics` (or `benchmark`) with the before/after figures and how they were measured.",
        )
    if proposal and len(rationale.strip()) < MIN_RATIONALE:
        return _finding(
            AttackVector.FALSE_METRIC,
            Severity.LOW,
            "the rationale states why the action is needed",
            {"rationale": rationale, "min_length": MIN_RATIONALE},
            f"Explain in at least {MIN_RATIONALE} characters what is wrong and how the action fixes it.",
        )
    return None


def _over_broad_module(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    target = plan.get("target", "").strip()
    scope = plan.get("scope")
    if target in ("", ".", "/", "*", "**") or "*" in target:
        severity, evidence = Severity.HIGH, {"target": target}
    elif kind.side_effecting and BARE_NAME.fullmatch(target):
        severity, evidence = Severity.MEDIUM, {"target": target}
    elif isinstance(scope, list) and len(scope) > 25:
        severity, evidence = Severity.MEDIUM, {"scope_size": len(scope)}
    else:
        return None
    return _finding(
        AttackVector.OVER_BROAD_MODULE,
        severity,
        "the action targets one well-bounded module",
        evidence,
        "Target a single module or file (a dotted path below the top-level package) and split larger changes.",
    )


def _hidden_maintenance_cost(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    estimate = plan.get("budget_estimate") or {}
    if estimate.get("llm_calls", 0) > 100 or estimate.get("runtime_seconds", 0) > 3600:
        return _finding(
            AttackVector.HIDDEN_MAINTENANCE_COST,
            Severity.MEDIUM,
            "the action's running cost is small and bounded",
            {"budget_estimate": estimate},
            "Split the work or justify the cost; one action should stay under 100 LLM calls and an hour of runtime.",
        )
    verb = next(iter(segments(plan.get("action_type", ""))), "")
    if kind.side_effecting and verb in CREATING_VERBS and not _present(plan, "owner"):
        return _finding(
            AttackVector.HIDDEN_MAINTENANCE_COST,
            Severity.LOW,
            "whatever the action adds has someone to maintain it",
            {"action_type": plan.get("action_type", ""), "owner": ABSENT},
            "Name an `owner` who will maintain what this action adds.",
        )
    return None


def _no_rollback(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    if not kind.side_effecting or _present(plan, "rollback_plan"):
        return None
    return _finding(
        AttackVector.NO_ROLLBACK,
        Severity.HIGH if kind is ActionKind.DESTRUCTIVE else Severity.MEDIUM,
        "plan specifies a safe rollback path",
        {"rollback_plan": plan.get("rollback_plan", ABSENT)},
        "Provide a concrete rollback_plan describing how to undo the action.",
    )


def _no_test_value(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    if not kind.side_effecting or _present(plan, "tests"):
        return None
    return _finding(
        AttackVector.NO_TEST_VALUE,
        Severity.HIGH,
        "The plan includes automated test coverage.",
        {"tests": plan.get("tests", ABSENT)},
        "Add a `tests` key listing the test file paths or test IDs that will exercise the changed behaviour.",
    )


def _top_package(path: str) -> str:
    return SEGMENT_SEPARATOR.split(path.strip("./\\"), maxsplit=1)[0]


def _scope_creep(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    scope, target = plan.get("scope"), plan.get("target", "")
    if kind is ActionKind.DESTRUCTIVE and not _present(plan, "scope"):
        return _finding(
            AttackVector.SCOPE_CREEP,
            Severity.HIGH,
            "action blast radius is bounded and reversible",
            {"action_type": plan.get("action_type", ""), "target": target},
            "Destructive actions require a `scope` field enumerating all affected files, callers, and dependent "
            "modules.",
        )
    if kind.side_effecting and isinstance(scope, list) and target:
        outside = sorted(str(item) for item in scope if _top_package(str(item)) != _top_package(target))
        if outside:
            return _finding(
                AttackVector.SCOPE_CREEP,
                Severity.MEDIUM,
                "the action stays inside the target's package",
                {"target": target, "outside_scope": outside},
                "Limit the action to the target's package, or propose the other packages' changes separately.",
            )
    return None


def _premature_abstraction(plan: dict[str, Any], kind: ActionKind, _proposal: bool) -> FalsificationFinding | None:
    text = f"{plan.get('action_type', '')} {plan.get('rationale', '')}"
    lowered = text.lower()
    match = ABSTRACTION.search(text.replace("_", " ")) if any(w in lowered for w in ABSTRACTION_WORDS) else None
    callers = plan.get("callers")
    if not kind.side_effecting or match is None or (isinstance(callers, list) and len(callers) >= 2):
        return None
    return _finding(
        AttackVector.PREMATURE_ABSTRACTION,
        Severity.MEDIUM,
        "the abstraction already has more than one concrete user",
        {"mentions": match.group(0), "callers": callers if callers is not None else ABSENT},
        "List at least two existing `callers` that need the abstraction, or solve the one case directly.",
    )


RULES: dict[AttackVector, Rule] = {
    AttackVector.DEPENDENCY_RISK: _dependency_risk,
    AttackVector.SECURITY_RISK: _security_risk,
    AttackVector.CIRCULAR_ARCHITECTURE: _circular_architecture,
    AttackVector.FALSE_METRIC: _false_metric,
    AttackVector.OVER_BROAD_MODULE: _over_broad_module,
    AttackVector.HIDDEN_MAINTENANCE_COST: _hidden_maintenance_cost,
    AttackVector.NO_ROLLBACK: _no_rollback,
    AttackVector.NO_TEST_VALUE: _no_test_value,
    AttackVector.SCOPE_CREEP: _scope_creep,
    AttackVector.PREMATURE_ABSTRACTION: _premature_abstraction,
}


def _validated(plan: dict[str, Any], prefix: str) -> dict[str, Any]:
    check_plan_fields(plan, prefix)
    evidence = plan.get("evidence", {})
    if isinstance(evidence, str):
        plan = {**plan, "evidence": parse_json_object(evidence, f"{prefix}evidence")}
    elif not isinstance(evidence, dict):
        raise KernelInputError.for_field(f"{prefix}evidence", f"{type(evidence).__name__} given", expected="an object")
    estimate = plan.get("budget_estimate")
    if estimate is not None:
        if not isinstance(estimate, dict):
            raise KernelInputError.for_field(f"{prefix}budget_estimate", "not an object", expected="an object")
        check_estimate(estimate, f"{prefix}budget_estimate")
    return plan


class FalsificationWorker:
    """Attack a plan with the ten vectors; pure, so it needs no database."""

    def falsify_json(self, plan_json: str) -> FalsificationReport:
        """Parse ``plan_json`` (a JSON object) and falsify it."""
        if not isinstance(plan_json, str):
            raise KernelInputError.for_field("plan_json", f"{type(plan_json).__name__} given", expected="a string")
        if len(plan_json) > MAX_PLAN_CHARS:
            raise KernelInputError.for_field(
                "plan_json", f"{len(plan_json)} characters", expected=f"at most {MAX_PLAN_CHARS}"
            )
        return self.falsify(parse_json_object(plan_json, "plan_json"), field_prefix="plan_json.")

    def falsify(
        self, plan: dict[str, Any], *, proposal: bool = False, kind: ActionKind | None = None, field_prefix: str = ""
    ) -> FalsificationReport:
        """Check ``plan``'s recognised keys, then run every vector over it (see :meth:`attack`)."""
        return self.attack(_validated(plan, field_prefix), proposal=proposal, kind=kind)

    def attack(
        self, plan: dict[str, Any], *, proposal: bool = False, kind: ActionKind | None = None
    ) -> FalsificationReport:
        """Run every vector over an already-checked plan; ``proposal`` adds the rationale-length rule."""
        kind = kind or classify_action(plan.get("action_type", ""))
        findings = [f for rule in RULES.values() if (f := rule(plan, kind, proposal)) is not None]
        score = round(sum(SEVERITY_WEIGHTS[f.severity] for f in findings) / len(findings), 4) if findings else 0.0
        return FalsificationReport(findings=findings, severity_score=score, recommendation=recommendation_for(score))

    @staticmethod
    def max_weight(report: FalsificationReport) -> float:
        """The heaviest finding's weight (the gate's ``falsification_severity``); 0.0 with no findings."""
        return max((SEVERITY_WEIGHTS[f.severity] for f in report.findings), default=0.0)
