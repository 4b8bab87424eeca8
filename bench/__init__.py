"""Benchmarks: each module prints its figures, measured side by side in one run."""
