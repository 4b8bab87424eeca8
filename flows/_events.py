"""Prefect events for notable changes in the colony, so users can build automations on them.

Resources are ``colony.target.<target>`` (where an action lands) and ``colony.agent.<id>``.
"""

from __future__ import annotations

from typing import Any

from prefect.events import emit_event

__all__ = ["GATE_REFUSED", "ROLES_CHANGED", "ROLE_CHANGED", "emit_gate_refused", "emit_role_changed", "emit_roles"]

GATE_REFUSED = "colony.gate.refused"
ROLE_CHANGED = "colony.agent.role-changed"
ROLES_CHANGED = "colony.roles.changed"


def _target(target: str) -> dict[str, str]:
    return {"prefect.resource.id": f"colony.target.{target}", "prefect.resource.name": target}


def _agent(agent_id: str) -> dict[str, str]:
    return {"prefect.resource.id": f"colony.agent.{agent_id}", "prefect.resource.name": agent_id}


def emit_gate_refused(agent_id: str, action_type: str, target: str, verdict: dict[str, Any]) -> None:
    """The gate refused (or a person rejected) an action on ``target``."""
    related = [{**_agent(agent_id), "prefect.resource.role": "agent"}]
    payload = {"action_type": action_type, **verdict}
    emit_event(GATE_REFUSED, resource=_target(target), related=related, payload=payload)


def emit_role_changed(agent_id: str, before: str, after: str, trust: float) -> None:
    """An agent's role changed after an outcome was recorded."""
    emit_event(ROLE_CHANGED, resource=_agent(agent_id), payload={"before": before, "after": after, "trust": trust})


def emit_roles(before: dict[str, int], after: dict[str, int]) -> None:
    """The colony's role distribution differs from the one the previous tick saw."""
    resource = {"prefect.resource.id": "colony.roles", "prefect.resource.name": "colony roles"}
    emit_event(ROLES_CHANGED, resource=resource, payload={"before": before, "after": after})
