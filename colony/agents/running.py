"""Running an assembled agent on pydantic-ai: the model it names, the loop, and resuming held calls.

A run ends in text, or in ``DeferredToolRequests`` when a call was held for a person:
each held call's metadata names Colony's ``approval_id``. Whoever decides it (``colony
approvals approve|reject``, HTTP, MCP, the Prefect UI) decides it in the kernel;
``decisions`` reads the kernel's state into the ``DeferredToolResults`` the next run
resumes with, so an approval is only ever what the kernel says it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio.to_thread
from pydantic_ai import Agent as ModelAgent
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.agent import AgentRunResult
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import AgentRunError, UserError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider_class

from colony.agents.assembly import Agent
from colony.agents.toolset import colony_toolset
from colony.errors import AgentModelError, AgentSpecError, ApprovalError
from colony.secrets import resolve_secret
from colony.spec import SecretRequirement
from colony.telemetry.agents import instrumentation

__all__ = ["AgentOutput", "decisions", "model_agent", "model_failure", "resolve_model", "run"]

AgentOutput = str | DeferredToolRequests


def resolve_model(agent: Agent) -> Model:
    """The model the agent's spec (or ``COLONY_MODEL``) names, its API key resolved as a secret kind.

    ``model_api_key`` and ``model_base_url`` belong to the spec's model: a different
    ``COLONY_MODEL`` brings its own credentials (its provider's environment). With a
    ``model_base_url``, ``openai:`` speaks chat completions (``openai-chat:``), which every
    OpenAI-compatible server serves; the Responses API most of them do not.

    Raises:
        AgentSpecError: The name is not a model pydantic-ai knows, or its provider is not installed.
        MissingSecretError: The key's kind resolves to nothing.
    """
    spec = agent.spec
    name = spec.model_name()
    options: dict[str, Any] = {}
    if name != spec.model:
        return _infer(spec.name, name, options)
    if spec.model_api_key:
        purpose = f"the API key of agent {spec.name!r}'s model"
        options["api_key"] = resolve_secret(
            SecretRequirement(name=spec.model_api_key, purpose=purpose)
        ).get_secret_value()
    if spec.model_base_url:
        options["base_url"] = spec.model_base_url
        if name.startswith("openai:"):
            name = "openai-chat:" + name.removeprefix("openai:")
    return _infer(spec.name, name, options)


def _infer(agent_name: str, name: str, options: dict[str, Any]) -> Model:
    """pydantic-ai's model for ``name``, its provider built with ``options`` (key, endpoint) if any."""

    def provider(provider_name: str) -> Provider[Any]:
        return infer_provider_class(provider_name)(**options)

    try:
        return infer_model(name, provider_factory=provider) if options else infer_model(name)
    except (UserError, ValueError, TypeError) as error:
        raise AgentSpecError(f"agent {agent_name!r}: model {name!r}: {error}") from None
    except ImportError as error:
        raise AgentSpecError(
            f"agent {agent_name!r}: model {name!r} needs its provider's package ({error}); "
            "install the pydantic-ai-slim extra it names, e.g. pip install 'pydantic-ai-slim[openai]'"
        ) from None


def model_agent(
    agent: Agent, *, model: Model | None = None, capabilities: Sequence[AbstractCapability[Any]] = ()
) -> ModelAgent[None, AgentOutput]:
    """The pydantic-ai agent: the spec's instructions, its Colony toolset, text or held calls as output.

    ``model`` replaces the spec's (a test's FunctionModel); ``capabilities`` adds pydantic-ai
    capabilities (Prefect durability, say).
    """
    return ModelAgent(
        model if model is not None else resolve_model(agent),
        name=agent.name,
        instructions=agent.spec.instructions or None,
        output_type=[str, DeferredToolRequests],
        toolsets=[colony_toolset(agent)],
        capabilities=[*capabilities, *instrumentation()],
    )


async def run(
    agent: Agent,
    prompt: str | None,
    *,
    model: Model | None = None,
    message_history: Sequence[ModelMessage] | None = None,
    deferred_tool_results: DeferredToolResults | None = None,
) -> AgentRunResult[AgentOutput]:
    """One run of the model loop over the agent's tools; resume a held run with ``decisions``' results.

    Raises:
        AgentModelError: The model is down, refused the request or answered garbage (one line
            naming the model and its URL).
    """
    chosen = model if model is not None else resolve_model(agent)
    try:
        return await model_agent(agent, model=chosen).run(
            prompt, message_history=message_history, deferred_tool_results=deferred_tool_results
        )
    except AgentRunError as error:
        raise model_failure(agent, chosen, error) from None


def model_failure(agent: Agent, model: Model, error: Exception) -> AgentModelError:
    """The one-line error for a model that failed a run: which model, at which URL, and why."""
    where = f" at {model.base_url}" if model.base_url else ""
    reason = " ".join(str(error).split()) or type(error).__name__
    return AgentModelError(f"agent {agent.name!r}: model {model.model_name!r}{where} failed: {reason}")


async def decisions(agent: Agent, requests: DeferredToolRequests) -> DeferredToolResults:
    """What the kernel decided for each held call of ``requests``: approved, or denied with who and why.

    Raises:
        ApprovalError: A call is still pending (or names no approval): decide it first.
    """
    kernel = agent.runtime.kernels.get()
    approvals: dict[str, ToolApproved | ToolDenied] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for call in requests.approvals:
        approval_id = requests.metadata.get(call.tool_call_id, {}).get("approval_id")
        if not isinstance(approval_id, str):
            raise ApprovalError(
                f"held call {call.tool_name!r} ({call.tool_call_id}) names no approval request", approval_id=""
            )
        approval = await anyio.to_thread.run_sync(kernel.get_approval, approval_id)
        state = approval.state.value
        if state == "pending":
            raise ApprovalError(
                f"approval {approval_id} ({call.tool_name}) awaits a person: "
                f"colony approvals approve|reject {approval_id}",
                approval_id=approval_id,
                state=state,
            )
        metadata[call.tool_call_id] = {"approval_id": approval_id}
        if state == "approved":
            approvals[call.tool_call_id] = ToolApproved()
        else:
            note = f": {approval.note}" if approval.note else ""
            approvals[call.tool_call_id] = ToolDenied(
                f"NOT RUN: {call.tool_name} was {state} by {approval.decided_by or 'nobody'}{note}. "
                "The refusal is recorded; do not retry it."
            )
    return DeferredToolResults(approvals=dict(approvals), metadata=metadata)
