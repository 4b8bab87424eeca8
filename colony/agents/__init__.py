"""Agents as data, run on pydantic-ai: an AgentSpec names catalog tools and a model; Colony governs every call.

spec.py       AgentSpec, its file, the model it names (COLONY_MODEL overrides it)
assembly.py   assemble: the capabilities mounted, the menu with overrides and approval
toolset.py    colony_toolset: pydantic-ai's wrappers around the ColonyToolset leaf, each call through Runtime.call
running.py    the model loop, and resuming held calls from the kernel's decisions
"""

from colony.agents.assembly import Agent, assemble
from colony.agents.held import HeldRun
from colony.agents.running import AgentOutput, decisions, model_agent, model_failure, resolve_model, run
from colony.agents.spec import MODEL_ENV, AgentSpec, Approval, ToolOverride, load_agent_spec
from colony.agents.toolset import ColonyToolset, colony_toolset, steer

__all__ = [
    "MODEL_ENV",
    "Agent",
    "AgentOutput",
    "AgentSpec",
    "Approval",
    "ColonyToolset",
    "HeldRun",
    "ToolOverride",
    "assemble",
    "colony_toolset",
    "decisions",
    "load_agent_spec",
    "model_agent",
    "model_failure",
    "resolve_model",
    "run",
    "steer",
]
