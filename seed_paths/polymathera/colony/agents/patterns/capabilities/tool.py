"""Seed 000's tool-capability bases: re-exports of Colony's, so its samples run as written.

A tool's ``spec.capabilities`` keys must each be the name of one of its ``@action_executor``
methods (the action that provides that capability); the class refuses to be defined otherwise.
"""

from colony.capability import LocalToolCapability, ToolCapability
from colony.sandbox import SandboxToolCapability

__all__ = ["LocalToolCapability", "SandboxToolCapability", "ToolCapability"]
