"""Benchmarks: one script per area, each printing its figures and ratios measured in one run."""
