"""The case a governed call carries to the gate: one model, read alike by every surface.

A call's case is its ``rationale``, ``rollback_plan``, ``evidence``, ``target`` and
``budget_estimate``. Every surface reads it through the types defined here: the flat ones
(MCP, an agent's toolset) with ``split_case``, the others (the gateway's body, the flows'
parameters, the client, the CLI) as fields of their own models or through ``CallRequest``,
which reads it with ``GateCase.read``. So the same case is accepted or refused alike, with
the same error naming the same field, wherever it arrives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from colony.errors import ToolInputError, field_errors, summarize

__all__ = [
    "FLAT_CASE_FIELDS",
    "GOVERNANCE_PROPERTIES",
    "MAX_CASE_TEXT",
    "MAX_EVIDENCE_CHARS",
    "NO_CASE",
    "BudgetEstimate",
    "CallerTarget",
    "Evidence",
    "GateCase",
    "Rationale",
    "RollbackPlan",
    "split_case",
]

MAX_CASE_TEXT = 10_000  # the kernel's own bound on a proposal's rationale and rollback plan
MAX_EVIDENCE_CHARS = 100_000  # the kernel's own bound on a proposal's evidence, as JSON
_MAX_AMOUNT = 1e9  # the kernel's bound on an amount of one ledger dimension

_Text = Annotated[str, Strict(), StringConstraints(max_length=MAX_CASE_TEXT)]


def _object(value: Any) -> dict[str, Any]:
    """Only a JSON object (a mapping, from Python) is evidence, said alike of JSON and of Python input."""
    if not isinstance(value, Mapping):
        raise PydanticCustomError("dict_type", "Input should be a JSON object")
    return dict(value)


def _bounded(evidence: dict[str, Any]) -> dict[str, Any]:
    size = len(json.dumps(evidence, default=str))
    if size > MAX_EVIDENCE_CHARS:
        raise ValueError(f"evidence is {size} characters as JSON; at most {MAX_EVIDENCE_CHARS} are accepted")
    return evidence


Rationale = Annotated[
    _Text | None,
    Field(description="Why this side-effecting call is necessary (shown to the gate; 20+ characters)."),
]
RollbackPlan = Annotated[
    _Text | None,
    Field(description="How to undo the call's effect if it goes wrong (the gate asks for one)."),
]
Evidence = Annotated[
    Annotated[dict[str, Any], BeforeValidator(_object), AfterValidator(_bounded)] | None,
    Field(description="Supporting evidence for the gate: test IDs under 'tests', PR URLs, error logs."),
]
CallerTarget = Annotated[
    Annotated[str, Strict(), StringConstraints(min_length=1, max_length=1024)] | None,
    Field(description="What the call affects beyond the tool itself (context for the gate, never instead of it)."),
]
BudgetEstimate = Annotated[
    dict[
        Literal["llm_calls", "runtime_seconds"],
        Annotated[float, Strict(), Field(ge=0, le=_MAX_AMOUNT, allow_inf_nan=False)],
    ]
    | None,
    Field(
        description="Expected usage, e.g. {'llm_calls': 1, 'runtime_seconds': 2}: it may raise the tool's declared "
        "cost, never lower it."
    ),
]


class GateCase(BaseModel):
    """What the gate reads of a governed call besides the call itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rationale: Rationale = None
    rollback_plan: RollbackPlan = None
    evidence: Evidence = None
    target: CallerTarget = None
    budget_estimate: BudgetEstimate = None

    @classmethod
    def read(cls, values: Mapping[str, Any]) -> GateCase:
        """The case in ``values``; ToolInputError naming each field at fault."""
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            problems = field_errors(error)
            message = f"the call's case for the gate is invalid: {summarize(problems)}"
            raise ToolInputError(message, errors=problems) from None


NO_CASE = GateCase()

#: The case fields a flat call carries beside its arguments (MCP, an agent's toolset): its served schema.
FLAT_CASE_FIELDS = ("rationale", "rollback_plan", "evidence")


def _served(node: dict[str, Any]) -> dict[str, Any]:
    """A property as served beside a tool's arguments: its type and description.

    The bounds are enforced (``GateCase``) but not served, so a governed tool's served
    definition, and so its pin, stays what it was.
    """
    branch = next(option for option in node["anyOf"] if option.get("type") != "null")
    return {"type": branch["type"], "description": node["description"]}


#: The case as JSON Schema properties: every surface that serves a governed tool flat (MCP, an agent's
#: toolset, the catalog) adds these to its input schema.
GOVERNANCE_PROPERTIES: dict[str, Any] = {
    name: _served(node) for name, node in GateCase.model_json_schema()["properties"].items() if name in FLAT_CASE_FIELDS
}


def split_case(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], GateCase]:
    """A flat governed call's arguments without its case, and the case (ToolInputError naming a bad field)."""
    rest = dict(arguments)
    case = {name: rest.pop(name) for name in FLAT_CASE_FIELDS if name in rest}
    return rest, GateCase.read(case) if case else NO_CASE
