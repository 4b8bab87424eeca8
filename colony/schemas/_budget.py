"""The work one validation may do, and the ``$ref`` loops it must not enter.

JSON Schema validation costs about (schema size x data size): a 100 KB ``allOf``
over a 100 KB array is billions of steps. A validation run through
:func:`colony.schemas.bounded_errors` carries a budget in a context variable;
every keyword evaluation spends from it (one step, plus the size of the
containers it walks), and a run that spends it all stops with an error instead
of holding a worker for hours. The same run refuses to re-enter a ``$ref`` on
the very value it is already checking: that loop never ends (``{"$ref": "#"}``).
Outside such a run (a tool's own output schema) nothing is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, NamedTuple

__all__ = ["DESCENT", "BudgetExhausted", "RefCycle", "Run", "charge", "current_run", "guarded_reference", "metered"]

Keyword = Callable[[Any, Any, Any, Any], Any]


class BudgetExhausted(Exception):
    """The run spent its whole budget."""


class RefCycle(Exception):
    """A reference re-entered the schema it came from without moving into the data."""

    def __init__(self, keyword: str, reference: str) -> None:
        super().__init__(f"{keyword} {reference!r}")
        self.keyword = keyword
        self.reference = reference


class Run:
    """One bounded validation: steps left, and the (schema, value) pairs a reference is checking."""

    __slots__ = ("active", "budget", "remaining")

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.remaining = budget
        self.active: set[tuple[int, int]] = set()

    def charge(self, steps: int) -> None:
        """Spend ``steps``; BudgetExhausted once the budget is gone."""
        self.remaining -= steps
        if self.remaining < 0:
            raise BudgetExhausted


_RUN: ContextVar[Run | None] = ContextVar("colony_schema_run", default=None)
current_run = _RUN.get


def charge(steps: int) -> None:
    """Spend ``steps`` from the current run, if there is one."""
    active = _RUN.get()
    if active is not None:
        active.charge(steps)


#: Steps one descent into a subschema costs: building its validator is ten times a keyword's work.
DESCENT = 10
_DESCENDS_PER_SUBSCHEMA = ("allOf", "anyOf", "oneOf", "extends")
_DESCENDS_PER_ELEMENT = ("prefixItems", "properties", "patternProperties", "dependentSchemas", "dependencies")
_DESCENDS_ONCE_PER_ELEMENT = (
    "items",
    "additionalItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
)
_DESCENDS_ONCE = ("not", "if", "then", "else", "$ref", "$dynamicRef", "$recursiveRef")
_CHARGED_INSIDE = ("enum", "const", "uniqueItems")


class Weight(NamedTuple):
    """What one evaluation of a keyword is charged."""

    base: int = 1
    #: Per element of the keyword's value (a list or object).
    per_value: int = 1
    #: Per element of the instance (a list or object).
    per_element: int = 1
    #: Per character of a string instance, as a right shift: 1 is one step per 2 characters.
    char_shift: int = 0


_WEIGHTS: dict[str, Weight] = {
    **dict.fromkeys(_DESCENDS_PER_SUBSCHEMA, Weight(1, DESCENT, 0)),
    **dict.fromkeys(_DESCENDS_PER_ELEMENT, Weight(1, 1, DESCENT)),
    **dict.fromkeys(_DESCENDS_ONCE_PER_ELEMENT, Weight(DESCENT, 1, DESCENT)),
    **dict.fromkeys(_DESCENDS_ONCE, Weight(DESCENT, 0, 0)),
    **dict.fromkeys(_CHARGED_INSIDE, Weight(1, 0, 0)),
    # Format checks walk the string in Python (relative-json-pointer: ~0.4 us a character);
    # RE2 is some hundred times faster.
    "format": Weight(char_shift=1),
    "pattern": Weight(char_shift=6),
}


def metered(name: str, keyword: Keyword) -> Keyword:
    """``keyword``, charging for the walks and descents it makes (see ``_WEIGHTS``)."""
    base, per_value, per_element, char_shift = _WEIGHTS.get(name, Weight())

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        active = _RUN.get()
        if active is not None:  # Run.charge, inlined: this is every keyword of every validation
            active.remaining -= base
            if per_value and type(value) in (list, dict):
                active.remaining -= per_value * len(value)
            if per_element and type(instance) in (list, dict):
                active.remaining -= per_element * len(instance)
            if char_shift and type(instance) is str:
                active.remaining -= len(instance) >> char_shift
            if active.remaining < 0:
                raise BudgetExhausted
        return keyword(validator, value, instance, schema)

    run.__name__ = getattr(keyword, "__name__", "keyword")
    return run


def guarded_reference(name: str, keyword: Keyword) -> Keyword:
    """A reference keyword (``$ref``...) that refuses to re-enter itself on the same value."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        active = _RUN.get()
        if active is None:
            return keyword(validator, value, instance, schema)
        return _guarded(active, name, keyword, validator, value, instance, schema)

    run.__name__ = getattr(keyword, "__name__", name)
    return run


def _guarded(
    active: Run, name: str, keyword: Keyword, validator: Any, value: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    # Data from JSON is a tree: the same object nested inside itself cannot
    # happen, so meeting (this schema, this very value) again means no progress.
    key = (id(schema), id(instance))
    if key in active.active:
        raise RefCycle(name, str(value))
    active.active.add(key)
    try:
        yield from keyword(validator, value, instance, schema) or ()
    finally:
        active.active.discard(key)


def start(budget: int) -> tuple[Run, Any]:
    """A new run, made current; hand the token to :func:`stop`."""
    run = Run(budget)
    return run, _RUN.set(run)


def stop(token: Any) -> None:
    """End the run :func:`start` began."""
    _RUN.reset(token)
