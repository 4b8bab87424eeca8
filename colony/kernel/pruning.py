"""The pruning daemon: nominate modules nobody seems to need, from the DEPENDENCY traces.

Read-only and advisory: it derives a registry (one entry per live DEPENDENCY trace: the
location, when it was last used, how many times a use was recorded, how strong the trace
still is) and nominates entries by three rules, each with a confidence:

- stale: no recorded use for ``stale_after_seconds`` (default 7 days): 0.5 rising to 0.95 at twice that;
- low usage: one recorded use and a trace faded below 0.5: 0.55 rising to 0.95 as it fades out;
- duplicate: the name is another entry's plus a copy suffix (``_old``, ``_v2``, ``_copy``, ``2``): 0.7.

Only candidates at or above 0.50 are reported, highest confidence first.
"""

from __future__ import annotations

from dataclasses import dataclass

import re2

from colony.kernel.models import PruningCandidate

__all__ = ["MIN_CONFIDENCE", "PruningDaemon", "RegistryEntry"]

MIN_CONFIDENCE = 0.5
FADED = 0.5
DUPLICATE_CONFIDENCE = 0.7
COPY_SUFFIX = re2.compile(r"(_old|_new|_copy|_backup|_bak|_v\d+|\d+)$")  # RE2: a run of digits is linear


@dataclass(frozen=True)
class RegistryEntry:
    """One module, as the DEPENDENCY traces describe it."""

    module_path: str
    last_used: float
    call_count: int
    strength: float


class PruningDaemon:
    """Scan a derived registry for modules worth removing."""

    def __init__(self, stale_after_seconds: float = 7 * 86400.0) -> None:
        self.stale_after_seconds = stale_after_seconds

    def scan(self, registry: list[RegistryEntry], now: float) -> list[PruningCandidate]:
        """Candidates with confidence >= 0.50, sorted by confidence (highest first)."""
        paths = {entry.module_path for entry in registry}
        candidates = []
        for entry in registry:
            reasons: list[tuple[float, str]] = []
            age = now - entry.last_used
            if age >= self.stale_after_seconds:
                over = min(1.0, (age - self.stale_after_seconds) / self.stale_after_seconds)
                reasons.append((0.5 + 0.45 * over, f"stale: no recorded use for {age / 86400:.1f} days"))
            if entry.call_count <= 1 and entry.strength < FADED:
                faded = 1.0 - entry.strength / FADED
                reasons.append(
                    (0.55 + 0.4 * faded, f"low usage: one recorded use, trace faded to {entry.strength:.2f}")
                )
            original = COPY_SUFFIX.sub("", entry.module_path)
            duplicate_of = original if original != entry.module_path and original in paths else None
            if duplicate_of:
                reasons.append((DUPLICATE_CONFIDENCE, f"duplicate: looks like a copy of {duplicate_of}"))
            if not reasons:
                continue
            confidence = round(max(score for score, _ in reasons), 4)
            if confidence < MIN_CONFIDENCE:
                continue
            candidates.append(
                PruningCandidate(
                    module_path=entry.module_path,
                    last_used=entry.last_used,
                    call_count=entry.call_count,
                    duplicate_of=duplicate_of,
                    reason="; ".join(reason for _, reason in reasons),
                    confidence=confidence,
                )
            )
        return sorted(candidates, key=lambda c: (-c.confidence, c.module_path))
