"""Prefect Blocks holding Colony's deployment configuration and secrets."""
