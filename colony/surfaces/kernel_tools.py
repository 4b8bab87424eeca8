"""The eight ``colony_*`` tools of seed 001, routed to the shared kernel.

Names, descriptions and schemas are the seed's, kept as data in
``kernel_tools.json`` beside a title and MCP annotations for each, and the
seed's version (one documented extension: an EXECUTE verdict of
``colony_propose_action`` carries its ``authorization``, which
``colony_record_outcome`` optionally takes back). Arguments are checked against
the input schema before the kernel sees them, and a key the schema does not
declare is refused (so the kernel's in-process extensions, such as
``side_effecting``, cannot be sent over MCP); any failure is a ColonyError
(``call_kernel_tool``) or the seed's ``{"error": ...}`` result
(``run_kernel_tool``), naming the field when the caller was at fault.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from colony.errors import ColonyError, FieldError, KernelError, KernelInputError, summarize
from colony.runtime import KernelProvider, Principal
from colony.runtime.kernel_access import authorize_kernel_call, outcome_reporter

if TYPE_CHECKING:
    from colony.kernel import ColonyKernel

__all__ = ["KernelTool", "call_kernel_tool", "kernel_tools", "run_kernel_tool"]


@dataclass(frozen=True)
class KernelTool:
    """One ``colony_*`` tool: the seed's definition, how MCP lists it, and its argument validator."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, Any]
    version: str
    validator: Draft202012Validator

    @property
    def structured_output_schema(self) -> dict[str, Any] | None:
        """The output schema when it is an object (MCP structured content must be one)."""
        return self.output_schema if self.output_schema.get("type") == "object" else None

    def check(self, arguments: Mapping[str, Any]) -> None:
        """Raise KernelInputError naming the fields that do not fit the input schema (see ``summarize``)."""
        missing = [name for name in self.input_schema.get("required", []) if name not in arguments]
        problems = [FieldError(field=name, message="required argument is missing") for name in missing]
        declared = self.input_schema.get("properties", {})
        problems += [
            FieldError(field=str(name), message="unknown argument", expected=", ".join(declared) or "no arguments")
            for name in arguments
            if name not in declared
        ]
        problems += [
            _field_error(error)
            for error in self.validator.iter_errors(dict(arguments))
            if error.validator != "required"
        ]
        if problems:
            raise KernelInputError(f"invalid arguments for {self.name}: {summarize(problems)}", errors=problems)


@cache
def kernel_tools() -> dict[str, KernelTool]:
    """The seed's eight tools, by name, in the seed's order."""
    text = resources.files("colony.surfaces").joinpath("kernel_tools.json").read_text(encoding="utf-8")
    document = json.loads(text)
    tools = {}
    for item in document["tools"]:
        validator = Draft202012Validator(item["input_schema"])
        tools[item["name"]] = KernelTool(validator=validator, version=document["version"], **item)
    return tools


def call_kernel_tool(kernels: KernelProvider, name: str, arguments: Mapping[str, Any], principal: Principal) -> Any:
    """Run one ``colony_*`` tool for ``principal``; an error of any kind, even opening the store, raises.

    The principal must hold the operation's capability token, and proposes or records only as itself
    (an operator may act for another agent, and a reviewer report on one); an agent's report on
    itself is recorded as its own word, which never raises its trust. An
    exception that is not one of Colony's becomes a KernelError worded as the seed words it:
    ``"<ExceptionType>: <message>"``.
    """
    tool = kernel_tools()[name]
    try:
        acted_by = authorize_kernel_call(principal, name, arguments)
        tool.check(arguments)
        # Who acted and who vouches come from authentication, never from the arguments.
        if name == "colony_propose_action":
            arguments = {**arguments, "acted_by": acted_by}
        if name == "colony_record_outcome":
            arguments = {**arguments, "reported_by": outcome_reporter(principal, arguments.get("agent_id"))}
        if name == "colony_tick" and not principal.operator:
            return _paced_tick(kernels.get())
        return _HANDLERS[name](kernels.get(), dict(arguments))
    except ColonyError:
        raise
    except Exception as error:  # seed 001: an exception becomes the error result
        raise KernelError(f"{type(error).__name__}: {error}") from error


def run_kernel_tool(kernels: KernelProvider, name: str, arguments: Mapping[str, Any], principal: Principal) -> Any:
    """Run one ``colony_*`` tool for ``principal``; an error of any kind becomes the seed's ``{"error": message}``."""
    try:
        return call_kernel_tool(kernels, name, arguments, principal)
    except ColonyError as error:
        return {"error": str(error)}


#: How often an agent's colony_tick advances the field: the scheduled tick's own pace, at most.
AGENT_TICK_SECONDS = 60


def _paced_tick(kernel: ColonyKernel) -> Any:
    """An agent's tick: at most one advance per ``AGENT_TICK_SECONDS``, else the status as it is.

    Each tick evaporates every trace, failures laid by people's rejections included: ticked in a
    loop, a ``kernel:tick`` holder would erase the field in a second. An operator ticks freely.
    """
    window = int(kernel.clock() // AGENT_TICK_SECONDS)
    return kernel.tick(key=f"agent-tick:{window}").model_dump(mode="json")


def _field_error(error: Any) -> FieldError:
    path = [str(part) for part in error.absolute_path]
    expected = json.dumps(error.validator_value) if error.validator in ("type", "enum") else None
    return FieldError(field=".".join(path), message=error.message, expected=expected)


def _propose(kernel: ColonyKernel, arguments: dict[str, Any]) -> Any:
    from colony.kernel import ProposeActionRequest

    verdict = kernel.propose_action(ProposeActionRequest(**arguments))
    # Extension: an EXECUTE carries its authorization, which the agent's colony_record_outcome brings back.
    return verdict.seed_dict() | ({"authorization": verdict.authorization} if verdict.authorization else {})


def _record(kernel: ColonyKernel, arguments: dict[str, Any]) -> Any:
    from colony.kernel import RecordOutcomeRequest

    # Seed 001's unattested path, unless the caller brings the EXECUTE verdict's authorization (an extension);
    # an unattested report still settles the agent's open reservation for the same action and target.
    authorization = arguments.pop("authorization", None)
    reported_by = arguments.pop("reported_by")
    request = RecordOutcomeRequest(**arguments)
    return kernel.record_outcome(request, authorization=authorization, reported_by=reported_by).seed_dict()


def _pheromones(kernel: ColonyKernel, arguments: dict[str, Any]) -> Any:
    from colony.kernel import SignalType

    signals = kernel.pheromone_query(arguments["location"], SignalType(arguments["signal_type"]))
    return [signal.model_dump(mode="json") for signal in signals]


_HANDLERS: dict[str, Callable[[ColonyKernel, dict[str, Any]], Any]] = {
    "colony_propose_action": _propose,
    "colony_record_outcome": _record,
    "colony_agent_profile": lambda kernel, a: kernel.agent_profile(a["agent_id"]).model_dump(mode="json"),
    "colony_status": lambda kernel, _: kernel.status().model_dump(mode="json"),
    "colony_pheromone_query": _pheromones,
    "colony_falsify_plan": lambda kernel, a: kernel.falsify_plan(a["plan_json"]).model_dump(mode="json"),
    "colony_pruning_report": lambda kernel, _: kernel.pruning_report().model_dump(mode="json"),
    "colony_tick": lambda kernel, _: kernel.tick().model_dump(mode="json"),
}
