"""Seed 004's ``edge_node.tools`` (see seed_paths/README.md)."""
