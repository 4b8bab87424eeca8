"""Seed 000's import root: re-exports of Colony's classes, so its samples run as written (see seed_paths/README.md)."""
