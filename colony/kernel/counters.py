"""An agent's proposals by state, kept so that ``total == accepted + rejected + held`` on every path.

Seed 001 defines ``total_proposals`` as accepted + rejected + held. Every proposal is in
exactly one of those states:

- a verdict puts it in **held** (HOLD, or EXECUTE awaiting its outcome) or **rejected**
  (REFUSE);
- an outcome report decides one proposal not yet decided by an outcome: a held one first
  (the report's own, when it is attested or matched to its reservation), which becomes
  **accepted** when the tests passed with feedback >= 0, else **rejected**. Else it settles
  a rejected one no outcome has decided yet (a refusal or an expiry: the agent went ahead
  and reported), which stays **rejected** whatever the report says: accepted means it
  passed all checks, and the gate was one. A report with nothing left to decide (an agent
  with no proposals, or more reports than proposals) moves trust and history but no counter;
- an expired reservation moves its proposal from held to rejected (no outcome came).

``unreported`` is the part of ``rejected`` that an outcome may still decide.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from colony.kernel.models import Decision

__all__ = ["Counts"]


@dataclass(frozen=True)
class Counts:
    """One agent's counters."""

    total: int = 0
    accepted: int = 0
    rejected: int = 0
    held: int = 0
    unreported: int = 0

    def on_verdict(self, decision: Decision) -> Counts:
        """One more proposal, held or rejected by its verdict."""
        if decision is Decision.REFUSE:
            return replace(self, total=self.total + 1, rejected=self.rejected + 1, unreported=self.unreported + 1)
        return replace(self, total=self.total + 1, held=self.held + 1)

    def on_outcome(self, accepted: bool) -> Counts:
        """An outcome report decides one undecided proposal (held first), if there is one."""
        if self.unreported and not self.held:
            return replace(self, unreported=self.unreported - 1)
        if not self.held:
            return self
        taken = replace(self, held=self.held - 1)
        if accepted:
            return replace(taken, accepted=taken.accepted + 1)
        return replace(taken, rejected=taken.rejected + 1)

    def on_expiry(self) -> Counts:
        """A reservation lapsed without an outcome: its proposal is rejected, still open to a late report."""
        if not self.held:
            return self
        return replace(self, held=self.held - 1, rejected=self.rejected + 1, unreported=self.unreported + 1)

    @property
    def consistent(self) -> bool:
        """Seed 001's invariant, and no counter below zero."""
        values = (self.total, self.accepted, self.rejected, self.held, self.unreported)
        return (
            min(values) >= 0
            and self.unreported <= self.rejected
            and (self.total == self.accepted + self.rejected + self.held)
        )
