"""Seed 004's ``clients`` package: the seed's samples import the Python client from here (see seed_paths/README.md)."""
