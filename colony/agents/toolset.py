"""An assembled agent's menu as pydantic-ai toolsets, every call made through ``Runtime.call``.

``colony_toolset`` composes pydantic-ai's own wrappers around one leaf, as its
durable-execution toolsets wrap theirs:

    RenamedToolset      the names ``tool_overrides`` give
    PreparedToolset     the text they give, and the gate's ``rationale``/``rollback_plan``/
                        ``evidence`` in a governed action's input schema
    ColonyToolset       the capabilities' own actions; each call through ``Runtime.call``

so the model is offered each menu entry exactly as ``Agent.menu`` shows it (both read
the agent's ``Layer`` for the action). The operator's approval is no wrapper:
pydantic-ai's ``ApprovalRequiredToolset`` defers a call before it reaches Colony and
resumes it on the run's say-so, while a Colony approval is a kernel request the
runtime opens when it holds the call (its id rides in the deferral's metadata) and
only the kernel's state resumes; the leaf hands the operator's setting to the runtime.
A call runs through the one pipeline as the agent's own principal; how each outcome
reaches the model:

    EXECUTED           the result (the verdict and record ride along as metadata)
    bad arguments      a retry naming each field at fault; on the tool's last
                       allowed attempt the same text as the result (``steer``)
    REFUSED            a plain result: the verdict and what would change it
    forbidden by policy  a plain result naming the operator's policies and why
    HELD               a pydantic-ai deferred approval; its metadata carries
                       Colony's ``approval_id``
    REJECTED, expired  a plain result naming who decided and why
    FAILED             a terminal tool failure (ToolFailed): the model adapts

A resumed call is resubmitted with the ``approval_id`` the deferred result's
metadata names; ``ctx.tool_call_approved`` by itself grants nothing (only the
kernel's approval state does), so a forged or replayed approval reaches the
model as a refusal, never as an executed call.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pydantic_core
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
from pydantic_ai.messages import ToolReturn
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, PreparedToolset, RenamedToolset, ToolsetTool

from colony.agents.assembly import Agent
from colony.capability import ActionDescription, action_menu
from colony.errors import ColonyError, PolicyDeniedError, ToolInputError
from colony.runtime import NO_CASE, CallOutcome, CallStatus, split_case, wire

__all__ = ["ColonyToolset", "colony_toolset", "policy_refusal_text", "refusal_text", "steer"]

# Arguments are validated by the pipeline (the action's own signature), so its field errors steer the model.
_ANY_OBJECT = pydantic_core.SchemaValidator(
    pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


_STRONGER_CASE = (
    "a stronger case (rationale, rollback plan, evidence such as tests) or trust earned by recorded successes"
)


def steer(ctx: RunContext[Any], message: str) -> str:
    """Ask the model to correct its call; on the tool's last allowed attempt, answer with the message instead.

    A retry past a tool's budget would end the whole run; the message returned as the
    result lets the model carry on (seed 002's ``steer``).

    Raises:
        ModelRetry: While the tool has retries left.
    """
    if ctx.last_attempt:
        return message
    raise ModelRetry(message)


def input_error_text(error: ToolInputError) -> str:
    """A bad call as the model reads it: the message and each field with what it expected."""
    lines = [error.message]
    for fault in error.errors:
        expected = f" (expected {fault.expected})" if fault.expected else ""
        lines.append(f"- {fault.field or '<input>'}: {fault.message}{expected}")
    return "\n".join(lines)


def refusal_text(outcome: CallOutcome) -> str:
    """A call that did not run, as a plain answer: what was decided, by whom, and what would change it."""
    verdict, approval = outcome.verdict, outcome.approval
    name = f"{outcome.tool}.{outcome.action}"
    if outcome.status is CallStatus.REFUSED:
        needed = "; ".join(verdict.required_evidence if verdict else ()) or _STRONGER_CASE
        lines = [
            f"NOT RUN: Colony's gate refused {name} (gate score {verdict.gate_score if verdict else None}).",
            f"Reason: {verdict.reason if verdict else ''}",
            f"What would change it: {needed}. Do not retry the same call unchanged.",
        ]
        return "\n".join(lines)
    reviewer = (approval.decided_by if approval else None) or "nobody"
    note = (approval.note if approval else None) or ""
    state = approval.state if approval else outcome.status.value
    return (
        f"NOT RUN: {name} was held for a person's approval and is {state} (decided by {reviewer}"
        + (f": {note}" if note else "")
        + "). The refusal is recorded; do not retry it."
    )


def colony_toolset(agent: Agent, *, toolset_id: str | None = None) -> AbstractToolset[Any]:
    """The tools ``agent``'s model is offered: the ColonyToolset leaf, reworded and renamed by pydantic-ai."""
    leaf = ColonyToolset(agent, toolset_id=toolset_id)
    # The leaf's tools and the layers are fixed at assembly: each step gets the same prepared definitions.
    prepared = {}
    for name, tool_def in leaf.tool_defs.items():
        layer = agent.layers[leaf.action_ids[name]]
        prepared[name] = replace(
            tool_def,
            description=layer.description or tool_def.description,
            parameters_json_schema=layer.schema(tool_def.parameters_json_schema),
        )

    def prepare(ctx: RunContext[Any], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [prepared[tool_def.name] for tool_def in tool_defs]

    renames = {
        new: name for name, action_id in leaf.action_ids.items() if (new := agent.layers[action_id].name) is not None
    }
    return RenamedToolset(PreparedToolset(leaf, prepare), renames)


def policy_refusal_text(error: PolicyDeniedError) -> str:
    """A call an operator's policy forbids, as a plain answer: which policies, and why."""
    return (
        f"NOT RUN: {error}\nPolicies: {', '.join(error.policies) or '(none permits it)'}.\n"
        "An operator's rule forbids this call; do not retry it unchanged."
    )


class ColonyToolset(AbstractToolset[Any]):
    """The agent's actions under their capabilities' own names; each call goes through the runtime as the agent.

    The leaf of ``colony_toolset`` (see the module docstring).
    """

    def __init__(self, agent: Agent, *, toolset_id: str | None = None) -> None:
        self.agent = agent
        self._id = toolset_id or f"colony-{agent.name}"
        # The mounts and the spec are fixed at assembly, so the tools (and which are governed) are built once.
        actions = action_menu(agent.capabilities)
        shown = {entry.action_id: entry for entry in agent.menu()}
        #: Each tool's action id, by the name it has here (before any renaming).
        self.action_ids = {entry.name: entry.action_id for entry in actions}
        self._tools = {entry.name: self._tool(entry) for entry in actions}
        self._menu_names = {entry.name: shown[entry.action_id].name for entry in actions}
        self._governed = {entry.name: agent.governed(entry) for entry in actions}

    @property
    def tool_defs(self) -> dict[str, ToolDefinition]:
        """Each tool's definition, by its name here."""
        return {name: tool.tool_def for name, tool in self._tools.items()}

    @property
    def id(self) -> str | None:
        """The toolset's id (durable execution names its units after it)."""
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """Every menu entry as a pydantic-ai tool: name, description and schema as ``Agent.menu`` shows them."""
        return dict(self._tools)

    def _tool(self, entry: ActionDescription) -> ToolsetTool[Any]:
        return ToolsetTool(
            toolset=self,
            tool_def=ToolDefinition(
                name=entry.name,
                description=entry.description,
                parameters_json_schema=entry.input_schema,
                metadata={"colony": {"action_id": entry.action_id, "side_effecting": entry.side_effecting}},
            ),
            max_retries=self.agent.retries(entry),
            args_validator=_ANY_OBJECT,
        )

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run the call through the pipeline as the agent and turn its outcome into what the model reads."""
        approval_id = (ctx.tool_call_metadata or {}).get("approval_id") if ctx.tool_call_approved else None
        try:
            arguments, case = split_case(tool_args) if self._governed[name] else (dict(tool_args), NO_CASE)
            outcome = await self.agent.outcome(
                self._menu_names[name],
                arguments,
                rationale=case.rationale,
                rollback_plan=case.rollback_plan,
                evidence=case.evidence,
                approval_id=approval_id if isinstance(approval_id, str) else None,
            )
        except ToolInputError as error:
            return steer(ctx, input_error_text(error))
        except PolicyDeniedError as error:  # a refusal like the gate's: a plain answer, not a failure
            return policy_refusal_text(error)
        except ColonyError as error:  # unknown tool, missing capability or secret, a forged approval
            raise ToolFailed(f"NOT RUN: {error}") from None
        return self._answer(outcome)

    @staticmethod
    def _answer(outcome: CallOutcome) -> Any:
        if outcome.status is CallStatus.EXECUTED:
            if not outcome.governed:
                return outcome.result
            metadata = {
                "verdict": wire(outcome.verdict),
                "record": wire(outcome.record),
                "approval": wire(outcome.approval),
            }
            return ToolReturn(return_value=outcome.result, metadata=metadata)
        if outcome.status is CallStatus.HELD:
            approval = outcome.approval
            raise ApprovalRequired(
                metadata={
                    "approval_id": approval.approval_id if approval else None,
                    "tool": outcome.tool,
                    "action": outcome.action,
                    "reason": outcome.verdict.to_dict().get("reason") if outcome.verdict else None,
                    "expires_at": approval.expires_at if approval else None,
                    "resolve": approval.resolve if approval else None,
                }
            )
        if outcome.status is CallStatus.FAILED:
            raise ToolFailed(f"{outcome.tool}.{outcome.action} failed: {outcome.error}")
        return refusal_text(outcome)
