"""What the trust checks cost a governed call: this checkout against the commit before them.

Since ``COLONY_BENCH_TRUST_BASELINE`` the kernel records who vouches for each outcome, reads
plans with a shell parser (RE2 and tree-sitter-bash instead of backtracking patterns), holds
each agent to its share of the budget and grows a call's reservation to its deadline. Side
by side in one run: ``bench.governance``'s in-process measurement (the same side-effecting
tool ungoverned and through ``Runtime.call``) in this checkout and in the baseline
(extracted with ``git archive``), alternating rounds so drift on a shared machine hits both
alike. The figure is the governance cost (governed p50 - ungoverned p50), median of the
rounds. Target: <= 1.5 ms per call.
"""

from __future__ import annotations

import os

from bench.audit import alternating, governance_cost

BASELINE = os.environ.get("COLONY_BENCH_TRUST_BASELINE", "60b3549")
ROUNDS = 5
TARGET_MS = 1.5


def main() -> None:
    now, before = alternating(BASELINE, ROUNDS)
    cost_now, cost_before = governance_cost(now), governance_cost(before)
    print(
        f"governance cost of a side-effecting call (append_note), median of {ROUNDS} alternating rounds: "
        f"now {cost_now:.3f} ms, before the trust checks ({BASELINE}) {cost_before:.3f} ms "
        f"({cost_now - cost_before:+.3f} ms; target <= {TARGET_MS} ms)"
    )
