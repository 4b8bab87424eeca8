"""Worst-case time of the plan check's danger scan on 1 MiB of adversarial text, by shape.

Each shape is one 1 MiB string in a plan's ``rollback_plan``, scanned by the same code the
security vector runs (RE2 patterns, then the shell reading, which parses at most 16 KiB
and reports larger text as too large to judge). Best-of-3 wall time per shape; target 50 ms.
"""

from __future__ import annotations

import time

from colony.kernel.dangers import scan_plan

SIZE = 1 << 20
TARGET_MS = 50.0
SHAPES = {
    "wget repeated": "wget " * (SIZE // 5),
    "curl without a pipe": "curl x " * (SIZE // 7),
    "deep nesting $(": "$(" * (SIZE // 2),
    "deep nesting sh -c": "sh -c '" * (SIZE // 7),
    "quotes": "'\"" * (SIZE // 2),
    "rm words": "rm -rf x; " * (SIZE // 10),
    "secret words": "password=" * (SIZE // 9),
}
SMALL = {name: text[: 16 * 1024 - 1] for name, text in SHAPES.items()}


def _best(text: str) -> float:
    plan = {"rationale": "Clean the build directory", "rollback_plan": text}
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        scan_plan(plan, ("rationale", "rollback_plan"))
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    """Print each shape's best-of-3 time at 1 MiB and just under the 16 KiB parse cap."""
    worst = 0.0
    for name in SHAPES:
        big, small = _best(SHAPES[name]), _best(SMALL[name])
        worst = max(worst, big, small)
        print(f"{name:24s} 1 MiB {big:8.2f} ms   16 KiB (parsed) {small:8.2f} ms")
    print(f"worst {worst:.2f} ms (target <= {TARGET_MS:g} ms)")


if __name__ == "__main__":
    main()
