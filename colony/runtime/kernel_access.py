"""Kernel operations are permissioned like tools, and judged on the caller's real identity.

Each ``colony_*`` operation needs a capability token (``kernel:read``,
``kernel:propose``, ``kernel:record``, ``kernel:tick``; ``kernel:admin`` for
trust overrides; ``kernel:approve`` to decide approval requests). An agent
proposes and records only as itself, and only an outcome it holds an
authorization for; its own report is recorded as the agent's word, which may
lower its trust but never raise it. Trust rises on what Colony ran itself, or
on the word of a person: an operator, or a ``kernel:approve`` principal
reporting on another agent. Nobody but an operator decides a request it asked
for itself, and an agent sees only its own requests.

``kernel:approve`` makes its holder a person in the kernel's eyes, so it counts only when
granted by name: the wildcards ``*`` and ``kernel:*``, given to an agent's token for its
tools and kernel operations, never make that agent a reviewer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from colony.errors import AttestationError, CapabilityDeniedError, IdentityError
from colony.runtime.principal import Principal

if TYPE_CHECKING:
    from colony.kernel import Reporter

__all__ = [
    "KERNEL_ADMIN",
    "KERNEL_APPROVE",
    "KERNEL_PERMISSIONS",
    "authorize_approval_decision",
    "authorize_kernel_call",
    "is_reviewer",
    "outcome_reporter",
    "visible_approvals",
]

KERNEL_ADMIN = "kernel:admin"
KERNEL_APPROVE = "kernel:approve"
KERNEL_PERMISSIONS: Mapping[str, str] = {
    "colony_propose_action": "kernel:propose",
    "colony_record_outcome": "kernel:record",
    "colony_agent_profile": "kernel:read",
    "colony_status": "kernel:read",
    "colony_pheromone_query": "kernel:read",
    "colony_falsify_plan": "kernel:read",
    "colony_pruning_report": "kernel:read",
    "colony_tick": "kernel:tick",
}
_ACTS_AS_AGENT = frozenset({"colony_propose_action", "colony_record_outcome"})


def authorize_kernel_call(principal: Principal, name: str, arguments: Mapping[str, Any]) -> str | None:
    """Check ``principal`` may run kernel operation ``name`` with ``arguments``.

    Returns:
        The person who acts on another agent's behalf, when one does (for the record), else None.
    """
    principal.require([KERNEL_PERMISSIONS[name]], f"the kernel operation {name}")
    if name not in _ACTS_AS_AGENT:
        return None
    agent = arguments.get("agent_id")
    agent = agent if isinstance(agent, str) else None
    if name == "colony_record_outcome" and _reviews(principal, agent):
        return principal.agent_id  # a reviewer's feedback on another agent's work
    acting = principal.acting_for(agent)
    if name == "colony_record_outcome" and not principal.operator and not arguments.get("authorization"):
        raise AttestationError(
            "an agent may record only an outcome it holds an authorization for: pass the `authorization` "
            "of the EXECUTE verdict (unattested reports are accepted from operators and reviewers only)"
        )
    return acting.acted_by


def outcome_reporter(principal: Principal, agent_id: str | None) -> Reporter:
    """Who vouches for ``principal``'s report on ``agent_id``: a person, or else the agent's own word.

    A person is an operator, or a ``kernel:approve`` principal reporting on another agent; an
    agent reporting on itself is taking its own word, whatever else it holds.
    """
    from colony.kernel import Reporter

    return Reporter.PERSON if principal.operator or _reviews(principal, agent_id) else Reporter.AGENT


def is_reviewer(principal: Principal) -> bool:
    """Whether ``principal`` is a person who reviews: an operator, or granted ``kernel:approve`` by name."""
    return principal.operator or KERNEL_APPROVE in principal.capabilities


def _reviews(principal: Principal, agent_id: str | None) -> bool:
    """Whether ``principal`` reports as a reviewer: a person, and the agent is another."""
    return agent_id is not None and agent_id != principal.agent_id and is_reviewer(principal)


def authorize_approval_decision(principal: Principal, requested_by: str) -> None:
    """Check ``principal`` may approve or reject a request ``requested_by`` asked for.

    Raises:
        CapabilityDeniedError: It is no operator and was not granted ``kernel:approve`` by name.
        IdentityError: It is the agent that asked (only an operator may decide its own request).
    """
    if not is_reviewer(principal):
        raise CapabilityDeniedError(
            f"deciding an approval request requires the capability token {KERNEL_APPROVE}, granted by name "
            f"(a wildcard does not make an agent a reviewer), which principal {principal.agent_id!r} does not hold",
            missing=[KERNEL_APPROVE],
        )
    if principal.agent_id == requested_by and not principal.operator:
        raise IdentityError(
            f"principal {principal.agent_id!r} asked for this approval itself: an agent never decides its own request"
        )


def visible_approvals(principal: Principal, agent_id: str | None) -> str | None:
    """The agent whose requests ``principal`` may read: anyone's for an operator or a reviewer (``None`` = all).

    A ``kernel:approve`` holder reads every request, since it may decide them. No capability
    token is needed to read one's own: an agent whose call was held must see why and whether
    it was decided.
    """
    if is_reviewer(principal):
        return agent_id
    if agent_id is not None and agent_id != principal.agent_id:
        raise IdentityError(f"principal {principal.agent_id!r} may read only its own approval requests")
    return principal.agent_id
