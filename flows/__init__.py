"""Prefect flows, each deployable from prefect.yaml."""
