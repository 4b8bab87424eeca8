"""Docker-sandboxed tools: the capability base, its container session, image roles, hardening.

Names are imported on first use (PEP 562): reading the sandbox roles, as every command does
through ``colony.settings``, needs no Docker SDK.
"""

from typing import TYPE_CHECKING

from colony._exports import imported_on_use

if TYPE_CHECKING:
    from colony.sandbox.capability import SandboxToolCapability
    from colony.sandbox.config import ImageRole, SandboxConfig
    from colony.sandbox.policy import ContainerPlan, SandboxOverrides
    from colony.sandbox.session import SandboxResult, SandboxSession

_MODULE_OF = {
    "ContainerPlan": "colony.sandbox.policy",
    "ImageRole": "colony.sandbox.config",
    "SandboxConfig": "colony.sandbox.config",
    "SandboxOverrides": "colony.sandbox.policy",
    "SandboxResult": "colony.sandbox.session",
    "SandboxSession": "colony.sandbox.session",
    "SandboxToolCapability": "colony.sandbox.capability",
}

__all__ = [
    "ContainerPlan",
    "ImageRole",
    "SandboxConfig",
    "SandboxOverrides",
    "SandboxResult",
    "SandboxSession",
    "SandboxToolCapability",
]


__getattr__ = imported_on_use(__name__, _MODULE_OF)
