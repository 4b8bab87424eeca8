"""Run every benchmark: ``python -m bench``."""

from __future__ import annotations

import importlib

BENCHMARKS = ["bench.tools", "bench.kernel", "bench.surfaces"]


def main() -> None:
    for name in BENCHMARKS:
        print(f"== {name}")
        importlib.import_module(name).main()


if __name__ == "__main__":
    main()
