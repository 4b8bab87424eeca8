"""Prefect Blocks holding Colony's configuration and secrets."""
