"""What ``tools/call`` answers: results and errors every MCP client can read.

A successful call answers its value as JSON text and, when the value is an
object, as structured content matching the tool's output schema. A failed call
is an ``isError`` result whose text is one JSON shape for every tool, kernel or
catalog::

    {"error": message, "type": ColonyError subclass, "code": JSON-RPC code,
     "retryable": bool, ...the error's own fields: "errors" (field errors),
     "verdict" (when the gate refused or held the call), "missing", ...}

An error carries no structured content that its tool's output schema does not
declare: clients validate structured content even on errors (the TypeScript
SDK rejects the whole result with -32602 when it does not match). Only the
``colony_*`` tools, whose seed schemas declare ``{"error": message}``, return
that as structured content.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent

from colony.errors import ColonyError
from colony.runtime import CallOutcome, wire
from colony.surfaces.error_mapping import mcp_error

__all__ = ["catalog_result", "error_body", "error_result", "held_result", "kernel_error_result", "value_result"]


def error_body(error: ColonyError) -> dict[str, Any]:
    """The one JSON shape of a failed call: message, type, code, retryable and the error's own fields."""
    details = error.to_dict()
    extra = {key: value for key, value in details.items() if key not in ("type", "message")}
    return {
        "error": str(error),
        "type": details.get("type", type(error).__name__),
        "code": mcp_error(error).code,
        "retryable": bool(error.retryable),
        **extra,
    }


def error_result(error: ColonyError) -> CallToolResult:
    """A catalog tool's failure: the error as JSON text, and no structured content."""
    return CallToolResult(content=[_text(error_body(error))], is_error=True)


def kernel_error_result(error: ColonyError) -> CallToolResult:
    """A ``colony_*`` tool's failure: the error as JSON text, and the seed's ``{"error": message}`` structured."""
    return CallToolResult(content=[_text(error_body(error))], structured_content={"error": str(error)}, is_error=True)


def value_result(value: Any) -> CallToolResult:
    """A successful call's value: JSON text, and structured content when it is an object."""
    structured = value if isinstance(value, dict) else None
    return CallToolResult(content=[_text(value)], structured_content=structured, is_error=False)


def catalog_result(outcome: CallOutcome) -> CallToolResult:
    """A catalog call's answer: the result, or for a governed call the verdict, the result and the outcome."""
    if not outcome.governed:
        return value_result(outcome.result)
    answer: dict[str, Any] = {"verdict": wire(outcome.verdict), "result": outcome.result}
    if outcome.record is not None:  # the output schema types it as an object: absent rather than null
        answer["outcome"] = outcome.record.to_dict()
    return value_result(answer)


def held_result(outcome: CallOutcome, resolve: dict[str, str]) -> CallToolResult:
    """A held call: not a protocol error, but no result either, so no structured content its schema would refuse.

    The text says it is held, names the approval request and how to resolve it; ``isError``
    is set because the tool did not run (clients check structured content of a success).
    """
    approval = (wire(outcome.approval) or {}) | {"resolve": resolve}
    body = {
        "status": "held",
        "error": f"{outcome.tool}.{outcome.action} is held for a person: approval {approval.get('approval_id')} "
        f"is {approval.get('state')}; {resolve['resubmit']} once it is approved",
        "approval": approval,
        "verdict": wire(outcome.verdict),
    }
    return CallToolResult(content=[_text(body)], is_error=True)


def _text(value: Any) -> TextContent:
    return TextContent(type="text", text=json.dumps(value, default=str))
