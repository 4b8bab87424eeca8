"""Who is calling: a Principal, made by authentication and never by the caller's say-so.

A principal is an agent id, the capability tokens it holds, whether it is an
operator and the groups its credential names (operators' policies read them).
Surfaces build one from a credential (a bearer token, a JWT, or the local process
for the CLI, stdio MCP and in-process Python) before anything else runs; a tool
never sees it as an argument. A call may name the agent it acts for: only an
operator may name another agent than itself, and the record says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from colony.errors import CapabilityDeniedError, IdentityError

__all__ = [
    "ALL_CAPABILITIES",
    "ANONYMOUS_AGENT",
    "LOCAL_OPERATOR",
    "OPERATOR_SCOPE",
    "Acting",
    "Principal",
]

ALL_CAPABILITIES = "*"
OPERATOR_SCOPE = "colony:operator"
ANONYMOUS_AGENT = "anonymous"


@dataclass(frozen=True)
class Acting:
    """The agent a call is judged as, and the principal that acted for it when they differ."""

    agent_id: str
    acted_by: str | None = None

    def describe(self) -> str:
        """One phrase for records: ``engineer-1`` or ``engineer-1 (by operator ops)``."""
        return self.agent_id if self.acted_by is None else f"{self.agent_id} (by operator {self.acted_by})"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    agent_id: str
    capabilities: frozenset[str] = field(default_factory=frozenset)
    operator: bool = False
    groups: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(
        cls, agent_id: str, capabilities: Iterable[str] = (), *, operator: bool = False, groups: Iterable[str] = ()
    ) -> Principal:
        """A principal from plain values."""
        return cls(agent_id=agent_id, capabilities=frozenset(capabilities), operator=operator, groups=frozenset(groups))

    def allows(self, capability: str) -> bool:
        """Whether this principal holds ``capability`` (``*`` holds all, ``tool:*`` every tool)."""
        if ALL_CAPABILITIES in self.capabilities or capability in self.capabilities:
            return True
        family, _, _ = capability.partition(":")
        return f"{family}:*" in self.capabilities

    def require(self, capabilities: Iterable[str], what: str) -> None:
        """Raise CapabilityDeniedError naming each capability token this principal lacks for ``what``."""
        missing = [token for token in capabilities if not self.allows(token)]
        if missing:
            raise CapabilityDeniedError(
                f"{what} requires the capability token(s) {', '.join(missing)}, "
                f"which principal {self.agent_id!r} does not hold",
                missing=missing,
            )

    def acting_for(self, agent_id: str | None) -> Acting:
        """The agent a call is judged as: this principal's own, or (operators only) the one named."""
        if agent_id is None or agent_id == self.agent_id:
            return Acting(self.agent_id)
        if not self.operator:
            raise IdentityError(
                f"principal {self.agent_id!r} cannot act as agent {agent_id!r}: "
                "identity comes from authentication; only an operator may act on another agent's behalf"
            )
        return Acting(agent_id, acted_by=self.agent_id)


LOCAL_OPERATOR = Principal(agent_id="local-operator", capabilities=frozenset({ALL_CAPABILITIES}), operator=True)
"""The principal of this machine's own user: the CLI, ``colony mcp`` over stdio, in-process Python, an open
loopback gateway. It acts as itself unless it names the agent it acts for."""
