"""An agent as data: the AgentSpec, the file it is read from, and the model it names.

A spec names catalog tools (``capabilities``), how this agent sees them
(``tool_overrides``), what a person must approve (``tool_approval``), how often a
tool may be retried after a bad call (``tool_retries``) and its model as
pydantic-ai names one (``provider:model``). ``COLONY_MODEL`` overrides the model
for every agent (a local OpenAI-compatible server, a cheaper model in CI). The
model's API key is a secret *kind* (``model_api_key``), resolved like every other
secret (``colony.secrets``), never a value in the spec.
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colony.errors import AgentSpecError, field_errors, summarize

__all__ = ["MODEL_ENV", "AgentSpec", "Approval", "ToolOverride", "load_agent_spec"]

#: The environment variable that overrides every spec's model.
MODEL_ENV = "COLONY_MODEL"

_KIND = r"^[a-z][a-z0-9_]*$"


class Approval(StrEnum):
    """The operator's per-tool approval setting."""

    REQUIRED = "required"
    NEVER = "never"


class ToolOverride(BaseModel):
    """How one agent sees one tool: a new name, a new description, or both."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$",
        description="Name shown to the model (letters, digits, '_' and '-': what every provider accepts).",
    )
    description: str | None = Field(default=None, min_length=1, description="Text shown to the model.")


class AgentSpec(BaseModel):
    """An agent, as data: who it is, which capabilities it mounts and which model drives it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The agent's id, used for trust and roles.")
    description: str = Field(default="", description="What the agent is for.")
    instructions: str = Field(default="", description="The system instructions the model reads first.")
    model: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_./-]+:\S+$|^test$",
        description="The model, as pydantic-ai names it ('provider:model'); COLONY_MODEL overrides it.",
    )
    model_api_key: str | None = Field(
        default=None, pattern=_KIND, description="Secret kind holding the model's API key (e.g. 'openai_api_key')."
    )
    model_base_url: str | None = Field(
        default=None, min_length=1, description="The provider's endpoint, for an OpenAI-compatible server."
    )
    capabilities: tuple[str, ...] = Field(min_length=1, description="Catalog tool names.")
    tool_overrides: dict[str, ToolOverride] = Field(
        default_factory=dict, description="Per-tool renames and rewordings, by tool or action id."
    )
    tool_approval: dict[str, Approval] = Field(
        default_factory=dict, description="Operator approval per tool or action id."
    )
    tool_retries: dict[str, Annotated[int, Field(ge=0, le=10)]] = Field(
        default_factory=dict, description="Retries after a bad call, per tool or action id (default: default_retries)."
    )
    default_retries: int = Field(default=1, ge=0, le=10, description="Retries after a bad call for every other tool.")

    def model_name(self) -> str:
        """The model this agent runs on: ``COLONY_MODEL`` when set, else the spec's.

        Raises:
            AgentSpecError: Neither names a model.
        """
        name = os.environ.get(MODEL_ENV) or self.model
        if not name:
            raise AgentSpecError(
                f"agent {self.name!r} names no model: set 'model: provider:model' in its spec or {MODEL_ENV}"
            )
        return name


def load_agent_spec(path: Path) -> AgentSpec:
    """Read an AgentSpec from a YAML or JSON file, naming the file on error."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, json.JSONDecodeError, yaml.YAMLError) as error:
        raise AgentSpecError(f"{path}: cannot read agent spec: {error}") from None
    try:
        return AgentSpec.model_validate(data)
    except ValidationError as error:
        raise AgentSpecError(f"{path}: invalid agent spec: {summarize(field_errors(error))}") from None
