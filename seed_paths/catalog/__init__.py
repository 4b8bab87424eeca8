"""Seed 004's ``catalog`` package: the ToolSchema records its samples read (see seed_paths/README.md)."""
