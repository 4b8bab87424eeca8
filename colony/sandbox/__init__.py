"""Docker-sandboxed tools: the capability base, its container session, image roles, hardening."""

from colony.sandbox.capability import SandboxToolCapability
from colony.sandbox.config import ImageRole, SandboxConfig
from colony.sandbox.policy import ContainerPlan, SandboxOverrides
from colony.sandbox.session import SandboxResult, SandboxSession

__all__ = [
    "ContainerPlan",
    "ImageRole",
    "SandboxConfig",
    "SandboxOverrides",
    "SandboxResult",
    "SandboxSession",
    "SandboxToolCapability",
]
