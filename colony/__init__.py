"""Colony: a governed tool runtime for AI agents, orchestrated by Prefect."""

from colony.capability import (
    AgentCapability,
    LocalToolCapability,
    ToolCapability,
    action_executor,
)
from colony.errors import ColonyError, ToolInputError
from colony.spec import ToolSpec

__all__ = [
    "AgentCapability",
    "ColonyError",
    "LocalToolCapability",
    "ToolCapability",
    "ToolInputError",
    "ToolSpec",
    "action_executor",
]
