"""What a caller is told about a held call, and whether a resubmission is the call that was approved.

A held call's outcome carries its approval request: the id, when it lapses, why it was
held and what would resolve it (a person approves or rejects it; the caller resubmits the
same call with ``approval_id``). A resubmission counts only for the agent that asked, the
same tool and action, and arguments with the same digest.
"""

from __future__ import annotations

from typing import Any

from colony.errors import FieldError, IdentityError, ToolInputError
from colony.runtime.principal import Acting
from colony.runtime.views import ApprovalView

__all__ = ["approval_view", "check_resubmission", "resolution"]


def resolution(approval_id: str) -> dict[str, str]:
    """How a held call is resolved, from the CLI (a surface adds its own URLs)."""
    return {
        "approve": f"colony approvals approve {approval_id} --note '...'",
        "reject": f"colony approvals reject {approval_id} --note '...'",
        "resubmit": f"call the same tool again with the same arguments and approval_id={approval_id!r}",
    }


def approval_view(approval: Any) -> ApprovalView:
    """A kernel Approval as a call outcome shows it: state, expiry, reason, decision and how to resolve it."""
    return ApprovalView.of(approval, resolution(approval.approval_id))


def check_resubmission(approval: Any, tool: str, tool_id: str, action: str, digest: str, acting: Acting) -> None:
    """Raise unless this call is the one ``approval`` was asked for (IdentityError for another agent).

    Only a call this pipeline held is judged on its tool (``tool_id``, the proposal's target):
    an agent's own kernel proposal naming a tool, its arguments written into its evidence, was
    judged on what the agent wrote, and a person approving that plan approved no tool call.
    """
    if approval.agent_id != acting.agent_id:
        raise IdentityError(
            f"approval {approval.approval_id} was asked for agent {approval.agent_id!r}, "
            f"not {acting.agent_id!r}: only the call it approves may use it"
        )
    if approval.target != tool_id:
        message = (
            f"approval {approval.approval_id} is for a plan the agent proposed (target {approval.target!r}), "
            f"not for a held call of {tool}: only the approval of a call Colony held may run one"
        )
        expected = "the id of a held call's approval"
        raise ToolInputError(message, errors=[FieldError(field="approval_id", message=message, expected=expected)])
    for field, given, approved in (
        ("tool", tool, approval.tool),
        ("action", action, approval.action),
        ("arguments", digest, approval.arguments_digest),
    ):
        if given != approved:
            message = f"approval {approval.approval_id} covers another call: its {field} differ from what was approved"
            raise ToolInputError(
                message,
                errors=[FieldError(field=field, message=message, expected=f"the {field} of the held call")],
            )
