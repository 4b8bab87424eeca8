"""What the operator's policies decided about one call, and how the pipeline acts on it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from colony.errors import PolicyDeniedError

__all__ = ["Effect", "PolicyDecision", "errored_policies"]

_NAMED = re.compile(r"`([^`]+)`")


def errored_policies(errors: Iterable[object]) -> set[str]:
    """The ids of the policies Cedar could not evaluate, from its errors (each names its policy in backticks)."""
    return {name for error in errors for name in _NAMED.findall(str(error))}


class Effect(StrEnum):
    """permit: on to the gate; forbid: refused here; hold: a person must approve it."""

    PERMIT = "permit"
    FORBID = "forbid"
    HOLD = "hold"


@dataclass(frozen=True)
class PolicyDecision:
    """The effect, the policies that determined it and their ``@reason`` (or ``@hold``) texts."""

    effect: Effect
    policies: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        """The decision as an audit record and a reviewer see it."""
        return {"decision": self.effect.value, "policies": list(self.policies), "reasons": list(self.reasons)}

    def refusal(self, what: str, who: str) -> PolicyDeniedError:
        """The error a forbidden call raises: which policies refused it, and why."""
        named = ", ".join(self.policies) or "no policy permits it (Cedar denies by default)"
        why = "; ".join(reason for reason in self.reasons if reason)
        return PolicyDeniedError(
            f"{what} is forbidden for {who} by policy {named}" + (f": {why}" if why else ""),
            policies=list(self.policies),
            reasons=list(self.reasons),
        )

    def hold_reason(self) -> str:
        """What a reviewer reads: the holding policies and why each asks for a person."""
        parts = [
            f"{policy}: {reason}" if reason else policy
            for policy, reason in zip(self.policies, self.reasons, strict=True)
        ]
        return "policy " + "; ".join(parts) + " requires a person's approval"
