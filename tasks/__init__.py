"""Prefect tasks: tool actions, kernel steps and the HPC job's steps."""
