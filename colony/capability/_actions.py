"""``@action_executor``: a typed method becomes an action a model can call.

The method's signature is the contract. At class creation it is turned into a
strict pydantic model (for validation) and a JSON Schema (for the model), its
docstring's ``Args:`` become the parameter descriptions, and the method is
replaced by a wrapper that validates the arguments before the body runs.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar, get_type_hints, overload

from griffe import Docstring, DocstringSectionKind
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from colony.capability._output_size import check_output_size, typed_dict_bound
from colony.capability._schema import clean_schema
from colony.errors import FieldError, ToolInputError, ToolOutputError, field_errors, summarize

__all__ = ["ActionDefinition", "ActionOptions", "action_executor"]

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "__colony_action__"
_STRUCTURED_RESULTS = (dict, list, str, int, float, bool)
logging.getLogger("griffe").setLevel(logging.ERROR)


@dataclass(frozen=True)
class ActionOptions:
    """What ``@action_executor(...)`` was told about one action."""

    name: str | None = None
    side_effecting: bool | None = None
    idempotent: bool | None = None


@dataclass(frozen=True)
class ActionDefinition:
    """One action: its contract, and what its class makes of it, derived once per class and frozen.

    ``side_effecting``, ``governed``, ``cacheable`` and ``retriable`` are decided when the
    class is created (``colony.capability._governance``); until then they read as the
    safest answer (changes the world, governed, never cached or retried).
    """

    name: str
    func: Callable[..., Any]
    description: str
    input_model: type[BaseModel]
    input_schema: dict[str, Any]
    is_async: bool
    #: What ``@action_executor`` was told (``side_effecting=None`` inherits the class's flag).
    declared: ActionOptions
    docstring_sections: frozenset[str]
    #: Model field name -> parameter name, for parameters BaseModel would shadow (``schema``, ``json``...).
    renamed: Mapping[str, str] = field(default_factory=dict)
    output_adapter: TypeAdapter[Any] | None = None
    output_check: Callable[[Any], None] | None = field(default=None, repr=False)
    #: A cheap bound of a result's JSON size from its declared TypedDict, when there is one.
    output_bound: Callable[[Any], int | None] | None = field(default=None, repr=False)
    #: Whether a call changes the world: the action's own flag, or its class's when it declares none.
    side_effecting: bool = True
    #: Whether a call passes the gate: it changes the world or costs, and is not the preconditions report.
    governed: bool = True
    #: Whether a result may be reused: deterministic, free of side effects, not the live report.
    cacheable: bool = False
    #: Whether a failed call may be repeated automatically: free of side effects, or declared idempotent.
    retriable: bool = False
    _validate: Callable[[Any], Any] = field(init=False, repr=False, compare=False)

    @property
    def idempotent(self) -> bool | None:
        """Whether repeating a side-effecting call is safe, as declared."""
        return self.declared.idempotent

    @property
    def summary(self) -> str:
        """The docstring's first line."""
        return self.description.split("\n", 1)[0]

    @property
    def takes_arguments(self) -> bool:
        """Whether the action has any parameter at all."""
        return bool(self.input_schema.get("properties"))

    def __post_init__(self) -> None:
        object.__setattr__(self, "_validate", self.input_model.__pydantic_validator__.validate_python)

    def validate_input(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments checked and coerced, or a ToolInputError naming each field."""
        try:
            values: dict[str, Any] = self._validate(arguments).__dict__
        except ValidationError as error:
            raise input_error(self.name, error) from None
        if self.renamed:
            values = {self.renamed.get(key, key): value for key, value in values.items()}
        return values

    def normalized_input(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments as the action receives them, defaults filled in, as JSON (ToolInputError naming each bad field)."""
        try:
            model = self.input_model.model_validate(arguments)
        except ValidationError:
            self.validate_input(arguments)  # raises the ToolInputError every surface shows
            raise
        return model.model_dump(mode="json", by_alias=True)

    async def checked_input(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``validate_input`` as a call awaits it: an action whose check may run long does it off the event loop."""
        return self.validate_input(arguments)

    def validate_output(self, result: Any, max_bytes: int | None = None) -> Any:
        """The result, if it is within ``max_bytes`` as JSON and fits the declared output; ToolOutputError otherwise."""
        if max_bytes is not None:
            bound = self.output_bound(result) if self.output_bound is not None else None
            if bound is None or bound > max_bytes:
                check_output_size(self.name, result, max_bytes)
        if self.output_adapter is None and self.output_check is None:
            return result
        if self.output_adapter is not None:
            try:
                self.output_adapter.validate_python(result, strict=True)
            except ValidationError as error:
                raise ToolOutputError(f"{self.name} returned an invalid result: {error}") from None
        if self.output_check is not None:
            self.output_check(result)
        return result


@overload
def action_executor(func: F, /) -> F: ...
@overload
def action_executor(
    *, name: str | None = None, side_effecting: bool | None = None, idempotent: bool | None = None
) -> Callable[[F], F]: ...
def action_executor(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    side_effecting: bool | None = None,
    idempotent: bool | None = None,
) -> F | Callable[[F], F]:
    """Mark a capability method as an action.

    Args:
        func: The method, when used bare as ``@action_executor``.
        name: The action's name if not the method's.
        side_effecting: Overrides the capability's flag for this action; ``None`` inherits.
        idempotent: Whether repeating a side-effecting call is safe (allows retries).
    """
    options = ActionOptions(name=name, side_effecting=side_effecting, idempotent=idempotent)

    def mark(method: F) -> F:
        setattr(method, _MARK, options)
        return method

    return mark(func) if func is not None else mark


def marked_options(value: Any) -> ActionOptions | None:
    """The options a method was marked with, if it is an action."""
    options = getattr(value, _MARK, None)
    return options if isinstance(options, ActionOptions) else None


def define_action(owner: type, attribute: str, method: Callable[..., Any], options: ActionOptions) -> ActionDefinition:
    """Build an action's contract from its signature and docstring."""
    action_name = options.name or attribute
    signature = inspect.signature(method)
    hints = get_type_hints(method, include_extras=True)
    doc = inspect.cleandoc(method.__doc__ or "")
    sections = Docstring(doc).parse("google", warnings=False) if doc else []
    arg_docs = {
        parameter.name: parameter.description
        for section in sections
        if section.kind is DocstringSectionKind.parameters
        for parameter in section.value
    }
    fields: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    for parameter in list(signature.parameters.values())[1:]:
        where = f"{owner.__qualname__}.{attribute}"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
            raise TypeError(f"action {where}: parameter {parameter.name!r} must be a named argument")
        if parameter.name not in hints:
            raise TypeError(f"action {where}: parameter {parameter.name!r} has no type annotation")
        default = ... if parameter.default is parameter.empty else parameter.default
        annotation = hints[parameter.name]
        field_name = parameter.name
        if hasattr(BaseModel, field_name):
            # pydantic warns when a field shadows a BaseModel attribute; keep the
            # parameter's name as the alias callers and the schema see.
            field_name = f"{parameter.name}_"
            renamed[field_name] = parameter.name
            annotation = Annotated[annotation, Field(alias=parameter.name)]
        info = FieldInfo.from_annotated_attribute(annotation, default)
        if info.description is None and parameter.name in arg_docs:
            info.description = arg_docs[parameter.name]
        fields[field_name] = (info.annotation, info)
    model = create_model(
        f"{owner.__name__}_{action_name}_input",
        __config__=ConfigDict(extra="forbid", strict=True),
        **fields,
    )
    returns = hints.get("return", Any)
    output_adapter = None
    if returns not in (Any, None) and returns not in _STRUCTURED_RESULTS:
        output_adapter = TypeAdapter(returns)
    return ActionDefinition(
        name=action_name,
        func=method,
        description=doc,
        input_model=model,
        input_schema=clean_schema(model.model_json_schema()),
        is_async=inspect.iscoroutinefunction(method),
        declared=options,
        docstring_sections=frozenset(section.kind.value for section in sections),
        renamed=renamed,
        output_adapter=output_adapter,
        output_bound=typed_dict_bound(returns),
    )


def validating_wrapper(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """The method, behind argument and result validation."""

    def definition_of(capability: Any) -> ActionDefinition:
        definition: ActionDefinition = type(capability).__colony_actions__[name]
        return definition

    def reject_positional(args: tuple[Any, ...]) -> None:
        if args:
            raise ToolInputError(
                f"{name} takes keyword arguments only; got {len(args)} positional",
                action=name,
                errors=[FieldError(field="", message="positional arguments are not accepted")],
            )

    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def run_async(self: Any, *args: Any, **arguments: Any) -> Any:
            reject_positional(args)
            definition = definition_of(self)
            values = await definition.checked_input(arguments)
            try:
                result = await method(self, **values)
            except ToolInputError as error:
                raise error.with_action(name) from None
            return definition.validate_output(result, self.max_output_bytes)

        return run_async

    @functools.wraps(method)
    def run(self: Any, *args: Any, **arguments: Any) -> Any:
        reject_positional(args)
        definition = definition_of(self)
        values = definition.validate_input(arguments)
        try:
            result = method(self, **values)
        except ToolInputError as error:
            raise error.with_action(name) from None
        return definition.validate_output(result, self.max_output_bytes)

    return run


def input_error(action: str, error: ValidationError) -> ToolInputError:
    """Translate pydantic's report into one error naming every field at fault."""
    problems = field_errors(error)
    return ToolInputError(f"invalid arguments for {action}: {summarize(problems)}", action=action, errors=problems)
