"""Docker-sandboxed tools: the capability base, its container session, image roles, hardening.

Names are imported on first use (PEP 562): reading the sandbox roles, as every command does
through ``colony.settings``, needs no Docker SDK.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'colony.sandbox' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
