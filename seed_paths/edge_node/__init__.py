"""Seed 004's ``edge_node`` package: the tool functions its samples import (see seed_paths/README.md)."""
