"""An operator's test cases for their policies: who calls which tool with what, and the decision expected.

A cases file (YAML or JSON) is a list of cases; ``colony policy test FILE`` runs them against
the policies and the catalog, so an operator's own repository can check its rules in CI::

    - name: the clerk may not run long scripts
      principal: {agent: report-clerk, groups: [reports]}
      tool: shell_exec
      arguments: {script: "..."}
      context: {time: "2026-01-05T23:30:00Z"}
      expect: forbid
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from colony.errors import PolicyError, ToolInputError
from colony.policy.decision import Effect, PolicyDecision
from colony.policy.engine import PolicyIndex
from colony.policy.request import CedarCall, Who, call_context
from colony.policy.schema import ToolFacts

__all__ = ["CaseContext", "CasePrincipal", "PolicyCase", "decide_case", "read_cases"]


class CasePrincipal(BaseModel):
    """Who calls, as a credential and the kernel would describe them."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1, description="The agent id the call is judged as.")
    operator: bool = Field(default=False, description="Whether the caller is an operator.")
    groups: list[str] = Field(default_factory=list, description="Groups from the caller's token or JWT.")
    capabilities: list[str] = Field(default_factory=list, description="Capability tokens the caller holds.")
    role: str = Field(default="sandbox", description="The agent's role in the kernel.")
    trust: float = Field(default=0.1, ge=0, le=1, description="The agent's trust in the kernel.")
    acted_by: str | None = Field(default=None, description="The operator acting for the agent, if any.")


class CaseContext(BaseModel):
    """What the gate would know of the call."""

    model_config = ConfigDict(extra="forbid")

    time: datetime | None = Field(default=None, description="When the call is made (ISO 8601; default: now).")
    target: str | None = Field(default=None, description="The caller's target.")
    estimate: dict[str, float] = Field(default_factory=dict, description="llm_calls and runtime_seconds.")
    above_default: bool = Field(default=False, description="Whether the caller raised the declared estimate.")


class PolicyCase(BaseModel):
    """One case: a call and the decision the policies should reach."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", description="What the case checks.")
    principal: CasePrincipal
    tool: str = Field(min_length=1)
    action: str | None = Field(default=None, description="The action (default: the tool's only or first one).")
    arguments: dict[str, Any] = Field(default_factory=dict)
    context: CaseContext = Field(default_factory=CaseContext)
    expect: Effect


_CASES = TypeAdapter(list[PolicyCase])


def read_cases(path: Path) -> list[PolicyCase]:
    """The cases of a YAML or JSON file; PolicyError naming the file and the case when one is malformed."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise PolicyError(f"{path}: cannot be read as YAML or JSON: {error}", file=str(path)) from None
    try:
        return _CASES.validate_python(document)
    except ValidationError as error:
        detail = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in detail["loc"]) or "<document>"
        raise PolicyError(f"{path}: case {where}: {detail['msg']}", file=str(path)) from None


def decide_case(index: PolicyIndex, tools: Mapping[str, ToolFacts], case: PolicyCase) -> PolicyDecision:
    """What ``index`` decides for the case's call (ToolInputError / PolicyError when the call is malformed)."""
    facts = tools.get(case.tool)
    if facts is None:
        raise PolicyError(f"case {case.name or case.tool!r}: no tool {case.tool!r} in the catalog")
    action = case.action or facts.primary or next(iter(facts.actions))
    if action not in facts.actions:
        raise PolicyError(f"case {case.name or case.tool!r}: {case.tool} has no action {action!r}")
    fixed = index.fixed(f"{case.tool}.{action}")
    if fixed is not None:
        return fixed
    who = Who(
        agent_id=case.principal.agent,
        operator=case.principal.operator,
        groups=frozenset(case.principal.groups),
        capabilities=frozenset(case.principal.capabilities),
        role=case.principal.role,
        trust=case.principal.trust,
    )
    moment = case.context.time.timestamp() if case.context.time is not None else None
    try:
        context = call_context(
            facts,
            action,
            case.arguments,
            target=case.context.target,
            acted_by=case.principal.acted_by,
            estimate=case.context.estimate,
            above_default=case.context.above_default,
            now=moment,
            reads=index.reads(f"{case.tool}.{action}"),
        )
    except ToolInputError as error:
        raise PolicyError(f"case {case.name or case.tool!r}: {error}") from None
    return index.decide(CedarCall.build(who, case.tool, action, facts.resource(action), context))
