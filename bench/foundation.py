"""Foundation: the cost of calling an action, and of discovering a large catalog."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._timing import per_call_seconds
from colony.capability import LocalToolCapability, action_executor
from colony.catalog import ToolEntry, registry_path, save_registry
from colony.spec import ToolSpec


def scale(a: int, b: float, label: str) -> float:
    return a * b


class Scale(LocalToolCapability):
    spec = ToolSpec(name="bench_scale", capabilities=("scale",))

    @action_executor
    def scale(self, *, a: int, b: float, label: str) -> float:
        """Scale.

        Args:
            a: Count.
            b: Factor.
            label: Unused label.

        Returns:
            a * b.
        """
        return a * b


def action_overhead() -> None:
    capability = Scale()
    plain = per_call_seconds(lambda: scale(a=3, b=1.5, label="x"))
    action = per_call_seconds(lambda: capability.scale(a=3, b=1.5, label="x"))
    print(f"plain function call        {plain * 1e6:8.2f} us")
    print(f"action call (validated)    {action * 1e6:8.2f} us")
    print(f"overhead                   {(action - plain) * 1e6:8.2f} us   (target <= 30 us)")
    print(f"ratio action / plain       {action / plain:8.1f}x")


DISCOVER = """
import sys, time
from pathlib import Path
from colony.catalog import discover_tools
root = Path(sys.argv[1])
discover_tools(root)
best = float("inf")
for _ in range(20):
    start = time.perf_counter()
    found = discover_tools(root)
    best = min(best, time.perf_counter() - start)
imported = sorted(m for m in sys.modules if m == "tools" or m.startswith("tools."))
print(len(found.tools), best, imported)
"""


def discovery() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        entries = {
            f"tool_{index:04d}": ToolEntry(
                name=f"tool_{index:04d}",
                purpose=f"Synthetic tool number {index} for the discovery benchmark.",
                location=f"tools/tool_{index:04d}",
                capability=f"do_{index}",
                capability_fqn=f"tools.tool_{index:04d}.Tool{index}" if index % 10 else "",
                extra={"tags": ["synthetic", "bench"], "index": index},
            )
            for index in range(1000)
        }
        save_registry(entries, registry_path(root))
        size = registry_path(root).stat().st_size
        output = subprocess.run(
            [sys.executable, "-c", DISCOVER, str(root)], capture_output=True, text=True, check=True
        ).stdout.split(maxsplit=2)
        count, best, imported = int(output[0]), float(output[1]), json.loads(output[2].replace("'", '"'))
        print(f"discover_tools, {count} entries ({size / 1024:.0f} KiB): {best * 1e3:.2f} ms   (target < 20 ms)")
        print(f"tool modules imported by discovery: {imported or 'none'}")


def main() -> None:
    """Print the foundation's figures."""
    action_overhead()
    discovery()


if __name__ == "__main__":
    main()
