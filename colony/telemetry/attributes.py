"""Span attribute names and values: OpenTelemetry's semantic conventions where they exist, ``colony.*`` for the rest.

A tool call is a GenAI ``execute_tool`` operation (``gen_ai.operation.name``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``); what the gate decided, who the call acts
for and what it cost are Colony's own. No argument or result value is ever set here
unless the redacted capture is turned on (``COLONY_TRACE_ARGUMENTS``).
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

__all__ = ["of_acting", "of_approval", "of_call", "of_outcome", "of_verdict"]

OPERATION = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
ERROR_TYPE = "error.type"
ACTION = "colony.action"
AGENT = "colony.agent"
ACTED_BY = "colony.acting_for"  # the principal that acts for the agent (an operator, a flow)
SURFACE = "colony.surface"
VERDICT = "colony.verdict"
SCORE = "colony.gate.score"
SEVERITY = "colony.gate.falsification_severity"
BUDGET_APPROVED = "colony.gate.budget_approved"
RESERVED_SECONDS = "colony.budget.reserved_runtime_seconds"
USED_SECONDS = "colony.budget.used_runtime_seconds"
OUTCOME = "colony.outcome"
APPROVAL_ID = "colony.approval.id"
APPROVAL_STATE = "colony.approval.state"
PROPOSAL_ID = "colony.proposal.id"
TRUST = "colony.trust_score"
ROLE = "colony.role"
ARGUMENTS = "colony.arguments"
RESULT = "colony.result"
LINK_KIND = "colony.link"
FLOW_RUN_ID = "prefect.flow_run.id"


def of_call(tool: str) -> dict[str, Any]:
    """A call's span as it starts: the GenAI tool-execution attributes."""
    return {OPERATION: "execute_tool", TOOL_NAME: tool, TOOL_TYPE: "function", TOOL_CALL_ID: uuid.uuid4().hex}


def of_acting(action: str, agent_id: str, acted_by: str | None) -> dict[str, Any]:
    """The action the call resolved to and who it acts for."""
    return {ACTION: action, AGENT: agent_id} | ({ACTED_BY: acted_by} if acted_by else {})


def of_verdict(verdict: Any) -> dict[str, Any]:
    """The gate's verdict (a GateVerdict): decision, score, falsification severity, budget and the reservation."""
    values: dict[str, Any] = {
        VERDICT: verdict.decision.value,
        SCORE: verdict.gate_score,
        SEVERITY: verdict.falsification_severity,
        BUDGET_APPROVED: verdict.budget_approved,
    }
    if verdict.proposal_id is not None:
        values[PROPOSAL_ID] = verdict.proposal_id
    if verdict.runtime_held is not None:
        values[RESERVED_SECONDS] = verdict.runtime_held
    return values


def of_approval(approval: Any) -> dict[str, Any]:
    """An approval request (a kernel Approval): its id, state, and its findings counted by severity."""
    values: dict[str, Any] = {APPROVAL_ID: approval.approval_id, APPROVAL_STATE: approval.state.value}
    severities = Counter(finding.severity.value for finding in approval.findings)
    values |= {f"colony.gate.findings.{severity}": count for severity, count in severities.items()}
    return values


def of_outcome(outcome: Any) -> dict[str, Any]:
    """A finished call (a CallOutcome): how it ended, the verdict it answered, what the record says."""
    values: dict[str, Any] = {OUTCOME: outcome.status.value, ACTION: outcome.action}
    if outcome.verdict is not None:
        values[VERDICT] = outcome.verdict.decision
    if (approval := outcome.approval) is not None:
        values[APPROVAL_ID] = approval.approval_id
        values[APPROVAL_STATE] = approval.state
    if (record := outcome.record) is not None:
        values[TRUST] = record.trust_score
        values[ROLE] = record.role
        for dimension, amount in (record.overspent or {}).items():
            values[f"colony.budget.overspent.{dimension}"] = amount
    if outcome.error is not None:
        values[ERROR_TYPE] = type(outcome.error).__name__
    return {name: value for name, value in values.items() if value is not None}
