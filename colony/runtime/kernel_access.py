"""Kernel operations are permissioned like tools, and judged on the caller's real identity.

Each ``colony_*`` operation needs a capability token (``kernel:read``,
``kernel:propose``, ``kernel:record``, ``kernel:tick``; ``kernel:admin`` for
trust overrides). An agent proposes and records only as itself; an unattested
outcome report is accepted only from an operator, so an agent cannot raise its
own trust with reports of work the gate never authorized.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colony.errors import AttestationError
from colony.runtime.principal import Principal

__all__ = ["KERNEL_ADMIN", "KERNEL_PERMISSIONS", "authorize_kernel_call"]

KERNEL_ADMIN = "kernel:admin"
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
        The operator who acts on another agent's behalf, when one does (for the record), else None.
    """
    principal.require([KERNEL_PERMISSIONS[name]], f"the kernel operation {name}")
    if name not in _ACTS_AS_AGENT:
        return None
    agent = arguments.get("agent_id")
    acting = principal.acting_for(agent if isinstance(agent, str) else None)
    if name == "colony_record_outcome" and not principal.operator and not arguments.get("authorization"):
        raise AttestationError(
            "an agent may record only an outcome it holds an authorization for: pass the `authorization` "
            "of the EXECUTE verdict (unattested reports are accepted from operators only)"
        )
    return acting.acted_by
