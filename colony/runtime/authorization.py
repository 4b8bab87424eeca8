"""The authorization a side-effecting action needs before it may run.

Only the Governor issues one: after the gate answered EXECUTE (or a person
approved a HOLD). The executor refuses to run a governed action without it, and
each authorization runs its action once; a second use is refused. This makes
"no side effect without the gate" a property of the executor, not a rule each
caller must remember.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from colony.errors import UngatedActionError

__all__ = ["Authorization", "require_authorization"]

_ISSUER = object()


@dataclass(frozen=True, eq=False)
class Authorization:
    """Permission for one run of one action, bound to the verdict that granted it.

    Attributes:
        proposal_id: The kernel's id of the proposal the gate judged.
        agent_id: The agent the action runs for.
        tool: The tool's name.
        action: The action's name.
        token: The kernel's signed authorization (None when attestation is off or a person approved).
        approved_by: The reviewer, when a person approved a held action.
    """

    proposal_id: str
    agent_id: str
    tool: str
    action: str
    token: str | None = field(default=None, repr=False)
    approved_by: str | None = None
    _issuer: object = field(default=None, repr=False, compare=False)
    _spent: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @classmethod
    def _issue(
        cls,
        *,
        proposal_id: str,
        agent_id: str,
        tool: str,
        action: str,
        token: str | None = None,
        approved_by: str | None = None,
    ) -> Authorization:
        """Issued by the Governor only."""
        return cls(proposal_id, agent_id, tool, action, token, approved_by, _issuer=_ISSUER)

    def rollback(self, action: str) -> Authorization:
        """The authorization for the action that undoes this one (a rollback runs under the same verdict)."""
        return Authorization(
            proposal_id=self.proposal_id,
            agent_id=self.agent_id,
            tool=self.tool,
            action=action,
            token=None,
            approved_by=self.approved_by,
            _issuer=_ISSUER,
        )

    @property
    def spent(self) -> bool:
        """Whether the action has already been run under this authorization."""
        return self._spent.is_set()


_spend_lock = threading.Lock()


def require_authorization(authorization: Authorization | None, tool: str, action: str, *, spend: bool = True) -> None:
    """Spend ``authorization`` for one run of ``tool.action``; UngatedActionError if it cannot be.

    ``spend=False`` only checks it (a retry of the same run, inside a Prefect task, checks again).
    """
    if not isinstance(authorization, Authorization) or authorization._issuer is not _ISSUER:
        raise UngatedActionError(
            f"{tool}.{action} is governed: it runs only with an authorization the gate issued "
            "(call it through Runtime.call, which proposes it to the kernel first)"
        )
    if (authorization.tool, authorization.action) != (tool, action):
        raise UngatedActionError(
            f"the authorization was issued for {authorization.tool}.{authorization.action}, not {tool}.{action}"
        )
    if not spend:
        return
    with _spend_lock:
        if authorization._spent.is_set():
            raise UngatedActionError(f"the authorization for {tool}.{action} was already used once")
        authorization._spent.set()
