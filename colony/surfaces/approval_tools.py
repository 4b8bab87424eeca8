"""Two MCP tools beside the seed's eight: list approval requests, and decide one.

``colony_list_approvals`` (``kernel:read``) shows an operator every request and an agent its own;
``colony_decide_approval`` needs ``kernel:approve`` (operators hold it) and never
decides a request its caller asked for itself (unless the caller is an operator).
They are served like the ``colony_*`` tools (title, annotations, ``_meta`` with
their version and definition hash, portable schemas); the seed's eight are untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from colony.errors import ColonyError, KernelError
from colony.runtime import KernelProvider, Principal
from colony.runtime.held import resolution
from colony.runtime.kernel_access import KERNEL_APPROVE, authorize_approval_decision, is_reviewer, visible_approvals
from colony.surfaces.kernel_tools import KernelTool

__all__ = ["APPROVAL_TOOLS_VERSION", "approval_tools", "call_approval_tool", "may_list", "mcp_resolution"]

APPROVAL_TOOLS_VERSION = "2.0.0"
_APPROVAL = {"type": "object", "description": "An approval request (Approval: id, state, call, score, reason, ...)."}
_DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "colony_list_approvals",
        "title": "List approval requests",
        "description": "List the approval requests of calls the gate held for a person, newest first, each with "
        "its arguments (declared secrets redacted): every request for an operator or a kernel:approve holder, "
        "the caller's own for an agent. Filter by state (pending, approved, rejected, "
        "expired) and, for operators, by agent_id.",
        "input_schema": {
            "type": "object",
            "properties": {
                "state": {
                    "type": "string",
                    "enum": ["pending", "approved", "rejected", "expired"],
                    "description": "Only requests in this state.",
                },
                "agent_id": {"type": "string", "description": "Only this agent's requests (operators)."},
            },
            "additionalProperties": False,
        },
        "output_schema": {
            "type": "object",
            "properties": {"approvals": {"type": "array", "items": _APPROVAL, "description": "Newest first."}},
            "required": ["approvals"],
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "colony_decide_approval",
        "title": "Approve or reject a held call",
        "description": "Approve or reject a pending approval request (needs kernel:approve; an agent never "
        "decides its own). Approving lets the held call run once, when its caller resubmits it with the "
        "approval_id; rejecting records the refusal against the agent that asked.",
        "input_schema": {
            "type": "object",
            "required": ["approval_id", "approve"],
            "properties": {
                "approval_id": {"type": "string", "description": "The request's id."},
                "approve": {"type": "boolean", "description": "true approves, false rejects."},
                "note": {"type": "string", "description": "Why, in a sentence; recorded with the decision."},
                "display_name": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 256,
                    "description": "A name shown beside the caller, e.g. an email address (the caller decides).",
                },
            },
            "additionalProperties": False,
        },
        "output_schema": {
            "type": "object",
            "properties": {"approval": {**_APPROVAL, "description": "The request, decided."}},
            "required": ["approval"],
        },
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": False,
        },
    },
]


@cache
def approval_tools() -> dict[str, KernelTool]:
    """The approval tools, by name."""
    return {
        item["name"]: KernelTool(
            validator=Draft202012Validator(item["input_schema"]), version=APPROVAL_TOOLS_VERSION, **item
        )
        for item in _DEFINITIONS
    }


_PERMISSIONS = {"colony_list_approvals": "kernel:read", "colony_decide_approval": KERNEL_APPROVE}


def may_list(principal: Principal, name: str) -> bool:
    """Whether ``principal`` is shown tool ``name`` (it holds the tool's capability token; a reviewer's by name)."""
    if _PERMISSIONS[name] == KERNEL_APPROVE:
        return is_reviewer(principal)
    return principal.allows(_PERMISSIONS[name])


def mcp_resolution(approval_id: str) -> dict[str, str]:
    """How a held call is resolved from an MCP client."""
    return {
        **resolution(approval_id),
        "decide_tool": f"colony_decide_approval with approval_id={approval_id!r} (operators)",
        "resubmit": f"call the same tool again with the same arguments plus approval_id={approval_id!r}",
    }


def call_approval_tool(
    kernels: KernelProvider, name: str, arguments: Mapping[str, Any], principal: Principal
) -> dict[str, Any]:
    """Run one approval tool for ``principal``; any failure is raised as a ColonyError."""
    tool = approval_tools()[name]
    try:
        principal.require([_PERMISSIONS[name]], f"the kernel operation {name}")
        tool.check(arguments)
        return _HANDLERS[name](kernels.get(), dict(arguments), principal)
    except ColonyError:
        raise
    except Exception as error:  # the same wording as the colony_* tools
        raise KernelError(f"{type(error).__name__}: {error}") from error


def _list(kernel: Any, arguments: dict[str, Any], principal: Principal) -> dict[str, Any]:
    agent = visible_approvals(principal, arguments.get("agent_id"))
    found = kernel.list_approvals(state=arguments.get("state"), agent_id=agent)
    return {"approvals": [approval.model_dump(mode="json") for approval in found]}


def _decide(kernel: Any, arguments: dict[str, Any], principal: Principal) -> dict[str, Any]:
    approval_id = arguments["approval_id"]
    authorize_approval_decision(principal, kernel.get_approval(approval_id).agent_id)
    decide = kernel.approve if arguments["approve"] else kernel.reject
    note = arguments.get("note", "")
    decided = decide(approval_id, principal.agent_id, note, display_name=arguments.get("display_name"))
    return {"approval": decided.model_dump(mode="json")}


_HANDLERS: dict[str, Callable[[Any, dict[str, Any], Principal], dict[str, Any]]] = {
    "colony_list_approvals": _list,
    "colony_decide_approval": _decide,
}
