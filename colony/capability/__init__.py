"""The capability framework: typed actions, tool capabilities, the action menu."""

from colony.capability._actions import ActionDefinition, action_executor
from colony.capability.base import ActionDescription, AgentCapability, action_menu
from colony.capability.tool import LocalToolCapability, Preconditions, ToolCapability
from colony.schemas import compiled_validator

__all__ = [
    "ActionDefinition",
    "ActionDescription",
    "AgentCapability",
    "LocalToolCapability",
    "Preconditions",
    "ToolCapability",
    "action_executor",
    "action_menu",
    "compiled_validator",
]
