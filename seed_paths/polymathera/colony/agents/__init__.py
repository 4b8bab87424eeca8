"""Part of seed 000's import paths (see seed_paths/README.md)."""
