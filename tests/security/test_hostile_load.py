"""Hostile calls beside honest ones: the attackers cost themselves, not everybody else.

Runs bench/hostile_load.py's two phases (quiet, then beside ReDoS, amplifier and
slow-client attackers) for a few seconds each against a real ``colony gateway``. The
figures against the 100 ms target are the benchmark's; here the bound is a stall (the
ReDoS of issue 14 froze /health for 45 s), set wide for a shared CI machine.
"""

from __future__ import annotations

import pytest

from bench.hostile_load import Phase, measure, ms

STALL_MS = 1000.0
# The attackers may take their share of two cores, and on CI the suite's other workers take
# theirs, unevenly between the phases (honest callers served 44% of the quiet phase's calls
# there); honest callers crowded out would serve next to none (the ReDoS once served none for 45 s).
SERVED_SHARE = 0.25


@pytest.fixture(scope="module")
def phases() -> tuple[Phase, Phase]:
    return measure(seconds=4.0)


def test_honest_callers_are_all_served_beside_the_attackers(phases: tuple[Phase, Phase]) -> None:
    quiet, loud = phases
    assert quiet.honest_errors == 0 and loud.honest_errors == 0
    assert len(loud.honest) >= SERVED_SHARE * len(quiet.honest), "the attackers crowded the honest callers out"


def test_health_never_stalls_beside_the_attackers(phases: tuple[Phase, Phase]) -> None:
    _, loud = phases
    assert len(loud.health) >= 20
    assert ms(loud.health, 0.99) < STALL_MS


def test_each_attack_is_answered_and_the_oversized_ones_refused(phases: tuple[Phase, Phase]) -> None:
    _, loud = phases
    statuses = loud.attack_statuses
    assert set(statuses) == {
        "redos ^(a+)+$",
        "redos ^(a|aa)+$ on 256 KiB",
        "allOf 2000 x 60,000 items",
        "amplifier at the caps",
        "amplifier 8000-char replacement",
    }
    assert set(statuses["amplifier 8000-char replacement"]) <= {400, 429}
    assert set(statuses["allOf 2000 x 60,000 items"]) <= {400, 429, 504}
    assert all(sum(counts.values()) > 0 for counts in statuses.values())
    assert not any(status >= 500 and status != 504 for counts in statuses.values() for status in counts)
