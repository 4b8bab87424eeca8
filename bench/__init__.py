"""Benchmarks: each module prints its figures and ratios; ``python -m bench`` runs them all."""
