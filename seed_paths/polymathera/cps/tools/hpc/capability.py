"""Seed 000's ``HPCToolCapability`` path: re-exports of ``colony.hpc``, so its HPC sample runs as written."""

from colony.hpc import HPCToolCapability, InputArtifactDescriptor

__all__ = ["HPCToolCapability", "InputArtifactDescriptor"]
