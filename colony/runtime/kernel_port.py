"""The kernel operations the Governor uses, as a port: what it asks of a kernel, typed, and nothing else.

``ColonyKernel`` is one; a test's kernel with a slow gate, or any other store, is another.
Each operation is a plain call the Governor makes from a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from colony.kernel import (
        AgentProfile,
        Approval,
        ApprovalClaim,
        ConsequenceRecord,
        GateVerdict,
        OutcomeRecord,
        ProposeActionRequest,
        RecordOutcomeRequest,
        Reporter,
    )

__all__ = ["KernelPort", "KernelSource"]


class KernelPort(Protocol):
    """Propose, grow a reservation's runtime, record; read and decide approval requests; read profiles."""

    def propose_action(self, request: ProposeActionRequest | Mapping[str, Any]) -> GateVerdict:
        """The gate's verdict on a proposal (EXECUTE reserves its budget)."""
        ...

    def reserve_runtime(self, proposal_id: str, seconds: float) -> float | None:
        """The runtime seconds an EXECUTE's reservation now holds, grown toward ``seconds``."""
        ...

    def record_outcome(
        self,
        request: RecordOutcomeRequest | Mapping[str, Any],
        authorization: str | None = None,
        *,
        reported_by: Reporter = ...,
        measured: bool = False,
    ) -> OutcomeRecord:
        """Store what a call did, settle its reservation, update its agent's trust."""
        ...

    def agent_profile(self, agent_id: str) -> AgentProfile:
        """The agent's profile (its role before an outcome changes it)."""
        ...

    def find_profile(self, agent_id: str) -> AgentProfile | None:
        """The agent's profile, or None for an agent never seen."""
        ...

    def consequence_of(self, proposal_id: str) -> ConsequenceRecord | None:
        """The history entry that settled a proposal."""
        ...

    def get_approval(self, approval_id: str) -> Approval:
        """One approval request."""
        ...

    def approve(self, approval_id: str, reviewer: str, note: str = "", *, display_name: str | None = None) -> Approval:
        """A person approves a held call."""
        ...

    def reject(self, approval_id: str, reviewer: str, note: str = "", *, display_name: str | None = None) -> Approval:
        """A person rejects a held call."""
        ...

    def expire_approval(self, approval_id: str, note: str = ...) -> Approval:
        """Nobody decided in time."""
        ...

    def claim_approval(
        self, approval_id: str, *, agent_id: str, tool: str, target: str, action: str, arguments_digest: str
    ) -> ApprovalClaim:
        """The approved call's one-time authorization."""
        ...


class KernelSource(Protocol):
    """Where the Governor finds its kernel (``KernelProvider``: created on first use)."""

    def get(self) -> KernelPort:
        """The kernel."""
        ...
