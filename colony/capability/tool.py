"""ToolCapability: a capability that fronts a tool, described by a frozen ToolSpec.

``LocalToolCapability`` runs in-process or as a CLI subprocess; the sandbox and
HPC variants extend the same base through the ``_describe_tool_extras`` and
``_precondition_warnings`` hooks.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, ClassVar

from typing_extensions import TypedDict

from colony.capability._actions import ActionDefinition, action_executor
from colony.capability._governance import PRECONDITIONS_ACTION, decide
from colony.capability._output_size import DEFAULT_MAX_OUTPUT_BYTES
from colony.capability._schema import clean_schema, schema_mismatches
from colony.capability.base import AgentCapability
from colony.errors import ToolOutputError
from colony.schemas import compiled_validator
from colony.spec import ToolSpec

__all__ = ["LocalToolCapability", "Preconditions", "ToolCapability"]


class Preconditions(TypedDict):
    """The preflight snapshot every tool answers ``check_preconditions`` with."""

    tool: str
    execution_locality: str
    resource_requirements: dict[str, Any]
    ok: bool
    warnings: list[str]


class ToolCapability(AgentCapability):
    """A capability fronting one tool. Concrete subclasses must declare ``spec``.

    Each key in ``spec.capabilities`` must equal the name of one of the class's
    ``@action_executor`` methods: that action provides the capability, and the first
    key's action is the tool's primary one (the catalog's search key and input schema).
    A class breaking this rule is refused when it is defined.

    An intermediate base (one meant to be subclassed again, like
    ``LocalToolCapability``) sets ``__abstract_tool__ = True`` in its body.
    """

    spec: ClassVar[ToolSpec]
    #: Exceptions from the tool that mean "try again" (a dropped connection, a busy service).
    retryable_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    #: For a side-effecting action, the action that undoes it: ``{"write_entry": "delete_entry"}``.
    #: The undo action is called with the arguments of the original call that it declares.
    rollback_actions: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: Largest answer an action may give, as compact UTF-8 JSON (what the gateway and MCP
    #: send); a larger one is refused with ToolOutputTooLargeError. A tool whose own caps
    #: allow more declares its own limit.
    max_output_bytes: ClassVar[int | None] = DEFAULT_MAX_OUTPUT_BYTES
    #: Whether actions run isolated from the host (a sandbox container, a Batch job): the gate reads it.
    isolated: ClassVar[bool] = False
    #: Whether a caller can make an action compute for seconds (a validator, a scanner over the
    #: largest input the caps allow): its calls then run in a worker process, killed at their
    #: deadline, so they never hold the serving process's GIL.
    cpu_bound: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        abstract = inspect.isabstract(cls) or cls.__dict__.get("__abstract_tool__", False)
        spec = getattr(cls, "spec", None)
        if not abstract:
            if not isinstance(spec, ToolSpec):
                raise TypeError(
                    f"{cls.__module__}.{cls.__qualname__} must declare `spec: ClassVar[ToolSpec]` "
                    "(a ToolSpec instance) to be a tool capability"
                )
            cls.side_effecting = spec.side_effecting  # before the actions are decided from it
        super().__init_subclass__(**kwargs)
        limit = cls.max_output_bytes
        if limit is None or isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise TypeError(f"{cls.__qualname__}.max_output_bytes must be a positive int (bytes), not {limit!r}")
        if abstract:
            return
        assert isinstance(spec, ToolSpec)
        missing = [key for key in spec.capabilities if key not in cls.__colony_actions__]
        if missing:
            raise TypeError(
                f"{cls.__qualname__}: no action of the class is named {', '.join(map(repr, missing))} "
                "(a key of spec.capabilities): each capability key must equal the name of one of its "
                f"@action_executor methods (its actions: {sorted(cls.__colony_actions__)})"
            )
        for key in spec.capabilities:
            _bind_spec_schemas(cls, key, spec)
        unknown = sorted(
            name for pair in cls.rollback_actions.items() for name in pair if name not in cls.__colony_actions__
        )
        if unknown:
            raise TypeError(f"{cls.__qualname__}.rollback_actions names {unknown}, which are not actions of the class")

    @classmethod
    def _decide(cls, definition: ActionDefinition) -> ActionDefinition:
        """The action's flags on this tool: its spec's side effects and cost decide whether it is governed."""
        spec = getattr(cls, "spec", None)
        return decide(definition, cls.side_effecting, spec if isinstance(spec, ToolSpec) else None, governable=True)

    @classmethod
    def capability_name(cls) -> str:
        return cls.spec.name

    @classmethod
    def capability_id(cls) -> str:
        return cls.spec.tool_id

    @classmethod
    def primary_action(cls) -> str:
        """The action that provides the tool's first capability key."""
        return cls.spec.capabilities[0]

    @classmethod
    def call_timeout(cls, action: str, arguments: Mapping[str, Any]) -> float | None:
        """The longest a call of ``action`` may take as asked: its ``timeout_seconds`` argument (or default).

        None when the action takes no timeout; the runtime then applies its own ceiling.
        The runtime reserves this much runtime budget for the call and kills the call past it.
        """
        given = arguments.get("timeout_seconds")
        if given is None:
            field = cls.actions()[action].input_model.model_fields.get("timeout_seconds")
            given = field.default if field is not None else None
        if isinstance(given, bool) or not isinstance(given, int | float) or not 0 < given < float("inf"):
            return None
        return float(given)

    def _domain_tags(self) -> frozenset[str]:
        """Domain tags a subclass adds to ``{"tool", <domain>}``."""
        return frozenset()

    def get_capability_tags(self) -> frozenset[str]:
        return frozenset({"tool", self.spec.domain, self.spec.execution_locality.value}) | self._domain_tags()

    def _describe_tool_extras(self) -> list[str]:
        """Lines a subclass adds to the planner card (image role, AWS Batch, ...)."""
        return []

    def get_action_group_description(self) -> str:
        return render_card(self.spec, self._describe_tool_extras())

    def _precondition_warnings(self) -> list[str]:
        """Reasons the tool cannot run right now; a subclass adds its own checks."""
        from colony.secrets import missing_secrets

        return [f"secret {name!r} is not configured" for name in missing_secrets(self.spec.secrets)]

    @action_executor(name=PRECONDITIONS_ACTION, side_effecting=False)
    def check_preconditions(self) -> Preconditions:
        """Report whether the tool can run here and now, before dispatching a call.

        Returns:
            {"tool", "execution_locality", "resource_requirements", "ok", "warnings"}:
            ``ok`` is false when any warning says the tool cannot run as asked;
            each warning names the limit or setting at fault.
        """
        warnings = self._precondition_warnings()
        return Preconditions(
            tool=self.spec.name,
            execution_locality=self.spec.execution_locality.value,
            resource_requirements=self.spec.resource_requirements.model_dump(mode="json"),
            ok=not warnings,
            warnings=warnings,
        )


class LocalToolCapability(ToolCapability):
    """A tool that runs in this process, or as a subprocess of it."""

    __abstract_tool__ = True


def _bind_spec_schemas(cls: type[ToolCapability], action: str, spec: ToolSpec) -> None:
    definition = cls.__colony_actions__[action]
    bound: dict[str, Any] = {}
    if spec.inputs_schema is not None:
        problems = schema_mismatches(spec.inputs_schema, definition.input_schema)
        if problems:
            raise TypeError(
                f"{cls.__qualname__}.{action}: signature drifts from spec.inputs_schema: " + "; ".join(problems)
            )
        bound["input_schema"] = spec.inputs_schema
    if spec.outputs_schema is not None and definition.output_adapter is not None:
        problems = schema_mismatches(spec.outputs_schema, clean_schema(definition.output_adapter.json_schema()))
        if problems:
            raise TypeError(
                f"{cls.__qualname__}.{action}: return type drifts from spec.outputs_schema: " + "; ".join(problems)
            )
    if spec.outputs_schema is not None and definition.output_adapter is None:
        validator = compiled_validator(spec.outputs_schema)

        def check(result: Any) -> None:
            error = next(iter(validator.iter_errors(result)), None)
            if error is not None:
                where = "/".join(str(part) for part in error.absolute_path) or "<root>"
                raise ToolOutputError(f"{action} returned an invalid result at {where}: {error.message}")

        bound["output_check"] = check
    if bound:
        cls.__colony_actions__ = MappingProxyType({**cls.__colony_actions__, action: replace(definition, **bound)})


def render_card(spec: ToolSpec, extras: list[str]) -> str:
    """The planner-visible card: what a call costs, needs and risks."""
    resources = spec.resource_requirements
    gpu = f"{resources.gpu.count}x {resources.gpu.kind} ({resources.gpu.memory_gb:g} GB)" if resources.gpu else "no GPU"
    wallclock = (
        f", ~{resources.expected_wallclock_seconds:g} s wall-clock" if resources.expected_wallclock_seconds else ""
    )
    cost = spec.cost_model
    lines = [
        f"Tool {spec.name} v{spec.version} ({spec.tool_id}), domain {spec.domain}.",
        spec.description,
        f"Runs: {spec.execution_locality.value} via {spec.backend.value}; "
        f"{spec.determinism.value}; {'side-effecting' if spec.side_effecting else 'no side effects'}.",
        f"Cost per call: {cost.cpu_seconds:g} CPU s, {cost.gpu_seconds:g} GPU s, "
        f"{cost.llm_calls} LLM calls, ${cost.usd_per_call:g}.",
        f"Resources: {resources.min_vcpus} vCPU, {resources.min_memory_gb:g} GB memory, {gpu}{wallclock}.",
        f"Human in the loop: {spec.hitl_frequency.value}; headless: {spec.headless.value}; "
        f"interruptible: {spec.interruptibility.value}.",
        f"Licence: {spec.licensing.value}" + (f" ({spec.licensing_notes})" if spec.licensing_notes else "") + ".",
    ]
    if spec.policy_tags:
        lines.append(f"Policy tags: {', '.join(spec.policy_tags)}.")
    return "\n".join(line for line in [*lines, *extras] if line)
