"""Seed 000's ``ToolSpec`` and its value types: re-exports of ``colony.spec``, so its samples run as written."""

from colony.spec import (
    Backend,
    CostModel,
    Determinism,
    ExecutionLocality,
    GpuRequirement,
    HeadlessReadiness,
    HITLFrequency,
    Interruptibility,
    Licensing,
    ResourceRequirements,
    SecretRequirement,
    ToolSpec,
)

__all__ = [
    "Backend",
    "CostModel",
    "Determinism",
    "ExecutionLocality",
    "GpuRequirement",
    "HITLFrequency",
    "HeadlessReadiness",
    "Interruptibility",
    "Licensing",
    "ResourceRequirements",
    "SecretRequirement",
    "ToolSpec",
]
