"""AgentCapability: a named group of actions an agent can mount.

Actions are collected from the class (and its bases) when the class is created,
so a capability's menu is known without instantiating it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from colony.capability._actions import ActionDefinition, define_action, marked_options, validating_wrapper
from colony.capability._governance import decide, lowered
from colony.errors import ToolInputError, UnknownActionError

__all__ = ["ActionDescription", "AgentCapability", "action_menu"]


class ActionDescription(BaseModel):
    """One entry of the action menu, exactly as the model will read it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The name the model calls.")
    action: str = Field(description="The action's own name on its capability.")
    action_id: str = Field(description="Stable id: '<capability id>.<action>'.")
    capability: str = Field(description="The capability's name.")
    description: str = Field(description="The text the model reads: docstring and card.")
    input_schema: dict[str, Any] = Field(description="JSON Schema of the arguments.")
    tags: frozenset[str] = Field(description="The capability's tags.")
    side_effecting: bool = Field(description="Whether the action changes the world.")
    needs_approval: bool = Field(default=False, description="Whether a person must approve a call.")


class AgentCapability:
    """Base of everything an agent can mount; subclasses add ``@action_executor`` methods."""

    __colony_actions__: ClassVar[Mapping[str, ActionDefinition]] = MappingProxyType({})
    side_effecting: ClassVar[bool] = False
    #: Largest answer an action may give, as compact UTF-8 JSON; None leaves it uncapped.
    max_output_bytes: ClassVar[int | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bases: dict[str, ActionDefinition] = {}
        for base in reversed(cls.__mro__[1:]):
            bases.update(getattr(base, "__colony_actions__", {}))
        actions = dict(bases)
        by_method = {d.func.__name__: d for d in bases.values()}
        for attribute, value in list(vars(cls).items()):
            options = marked_options(value)
            if options is None and attribute in by_method and callable(value):
                # An override of an inherited action stays an action, validated as before.
                options = by_method[attribute].declared
            if options is None:
                continue
            definition = define_action(cls, attribute, value, options)
            actions[definition.name] = definition
            setattr(cls, attribute, validating_wrapper(definition.name, value))
        # Each class decides its own copies: a subclass never changes what its bases answer.
        decided = {name: cls._decide(definition) for name, definition in actions.items()}
        for name, definition in decided.items():
            if lowered(bases.get(name), definition):
                raise TypeError(
                    f"{cls.__qualname__}.{name}: a subclass cannot make an action its base governs ungoverned "
                    "(it changes the world or costs there; keep its side_effecting and the spec's cost)"
                )
        cls.__colony_actions__ = MappingProxyType(decided)

    @classmethod
    def _decide(cls, definition: ActionDefinition) -> ActionDefinition:
        """The action's flags on this class: a plain capability's calls never pass the gate."""
        return decide(definition, cls.side_effecting, None, governable=False)

    @classmethod
    def capability_name(cls) -> str:
        """The name the capability is known by in menus and errors."""
        return cls.__name__

    @classmethod
    def capability_id(cls) -> str:
        """Stable id that overrides and approvals key on."""
        return f"capability:{cls.__module__}.{cls.__qualname__}"

    @classmethod
    def actions(cls) -> Mapping[str, ActionDefinition]:
        """Every action of the capability, by name."""
        return cls.__colony_actions__

    def get_capability_tags(self) -> frozenset[str]:
        """Tags the dispatcher filters the menu by."""
        return frozenset()

    def get_action_group_description(self) -> str:
        """What the planner reads about the capability as a whole."""
        return inspect.cleandoc(type(self).__doc__ or self.capability_name())

    def action_side_effecting(self, action: str) -> bool:
        """The action's own flag, or the capability's when it declares none (decided with the class)."""
        return self.actions()[action].side_effecting

    def get_action_descriptions(
        self,
        include_tags: Iterable[str] | None = None,
        exclude_tags: Iterable[str] | None = None,
    ) -> list[ActionDescription]:
        """This capability's actions as the model sees them, filtered by tags."""
        return action_menu([self], include_tags=include_tags, exclude_tags=exclude_tags)

    async def invoke(self, action: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Validate ``arguments`` and run ``action``; the one entry for callers with a dict."""
        method = self.bound_action(action)
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ToolInputError(f"arguments must be a JSON object, got {type(arguments).__name__}", action=action)
        result = method(**(arguments or {}))
        return await result if inspect.isawaitable(result) else result

    def bound_action(self, action: str) -> Any:
        """The validating bound method for ``action``, or UnknownActionError."""
        definition = self.actions().get(action)
        if definition is None:
            known = ", ".join(sorted(self.actions())) or "none"
            raise UnknownActionError(f"{self.capability_name()} has no action {action!r} (it has: {known})")
        return getattr(self, definition.func.__name__)

    async def shutdown(self) -> None:
        """Release whatever the capability holds (containers, clients); default: nothing."""


def action_menu(
    capabilities: Iterable[AgentCapability],
    include_tags: Iterable[str] | None = None,
    exclude_tags: Iterable[str] | None = None,
) -> list[ActionDescription]:
    """The actions of ``capabilities`` a planner is offered, with unique names.

    An action keeps its own name unless two capabilities offer the same one;
    then each is qualified as ``<capability>__<action>``: letters, digits and ``_`` only,
    the names every model provider accepts for a tool.
    """
    include = frozenset(include_tags or ())
    exclude = frozenset(exclude_tags or ())
    chosen = [
        capability
        for capability in capabilities
        if include <= capability.get_capability_tags() and not (exclude & capability.get_capability_tags())
    ]
    counts: dict[str, int] = {}
    for capability in chosen:
        for name in capability.actions():
            counts[name] = counts.get(name, 0) + 1
    menu = []
    for capability in chosen:
        card = capability.get_action_group_description()
        tags = capability.get_capability_tags()
        for name, definition in capability.actions().items():
            shown = name if counts[name] == 1 else f"{capability.capability_name()}__{name}"
            menu.append(
                ActionDescription(
                    name=shown,
                    action=name,
                    action_id=f"{capability.capability_id()}.{name}",
                    capability=capability.capability_name(),
                    description=f"{definition.description}\n\n{card}".strip(),
                    input_schema=definition.input_schema,
                    tags=tags,
                    side_effecting=capability.action_side_effecting(name),
                )
            )
    return menu
