"""Run every benchmark module in turn."""

import importlib

BENCHMARKS = ["bench.tools"]

for name in BENCHMARKS:
    importlib.import_module(name).main()
