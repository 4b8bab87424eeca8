"""Run every benchmark module, or those named: ``python -m bench [foundation ...]``."""

import importlib
import sys

MODULES = [
    "foundation",
    "tools",
    "adversarial",
    "hostile_load",
    "kernel",
    "gate_throughput",
    "orchestration",
    "surfaces",
    "governance",
    "audit",
    "sandbox",
    "hpc",
    "agents",
    "plan_scan",
    "earned_trust",
    "policy",
    "telemetry",
    "upstream",
]


def main() -> None:
    """Run the chosen benchmark modules in order."""
    chosen = sys.argv[1:] or MODULES
    for name in chosen:
        print(f"\n## bench.{name}")
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main()
