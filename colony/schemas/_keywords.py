"""The keywords whose stock implementations can run away on a caller's input.

jsonschema matches ``pattern``, ``patternProperties`` (and, through them,
``additionalProperties`` and ``unevaluatedProperties``) with Python's
backtracking ``re``, and checks ``uniqueItems``, ``enum`` and ``const`` by
comparing values pair by pair. These do the same with RE2 and a hash of each
value (charged to the run by its size), with jsonschema's own messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from jsonschema.exceptions import ValidationError
from referencing.jsonschema import lookup_recursive_ref

from colony.schemas._budget import RefCycle, current_run
from colony.schemas._patterns import PatternError, schema_pattern

__all__ = [
    "additional_properties",
    "const",
    "enum",
    "pattern",
    "pattern_properties",
    "unevaluated_properties",
    "unevaluated_properties_2019",
    "unique_items",
]

#: (schema id, value id) pairs the evaluated-keys walk has entered through references.
_TRAIL: ContextVar[frozenset[tuple[int, int]]] = ContextVar("colony_evaluated_trail", default=frozenset())


def pattern(validator: Any, regex: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _regex("pattern", regex).search(instance):
        yield ValidationError(f"{instance!r} does not match {regex!r}")


def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    _charge(len(patterns) * len(instance))
    for regex, subschema in patterns.items():
        compiled = _regex("patternProperties", regex)
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=regex)


def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            unexpected = _extras(sorted(extras, key=str))
            yield ValidationError(f"Additional properties are not allowed ({unexpected} unexpected)")


def unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """Draft 2020-12's ``unevaluatedProperties``."""
    return _unevaluated(validator, unevaluated, instance, schema, legacy=False)


def unevaluated_properties_2019(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """Draft 2019-09's ``unevaluatedProperties``."""
    return _unevaluated(validator, unevaluated, instance, schema, legacy=True)


def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _key(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def enum(validator: Any, options: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if _key(instance) not in _option_keys(options):
        yield ValidationError(f"{instance!r} is not one of {options!r}")


def const(validator: Any, expected: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if _key(instance) != _cached(expected, _key):
        yield ValidationError(f"{expected!r} was expected")


def _regex(keyword: str, regex: str) -> Any:
    """The schema's pattern compiled; a refusal names the keyword it came from."""
    try:
        return schema_pattern(regex)
    except PatternError as error:
        error.keyword = keyword
        raise


def _charge(steps: int) -> None:
    run = current_run()
    if run is not None:
        run.charge(steps)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    patterns = [_regex("patternProperties", regex) for regex in schema.get("patternProperties", {})]
    _charge(len(patterns) * len(instance))
    for key in instance:
        if key not in properties and not any(compiled.search(key) for compiled in patterns):
            yield key


def _extras(extras: list[Any]) -> str:
    verb = "was" if len(extras) == 1 else "were"
    return ", ".join(repr(extra) for extra in extras) + f" {verb}"


def _unevaluated(validator: Any, unevaluated: Any, instance: Any, schema: Any, *, legacy: bool) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_evaluated_keys(validator, instance, schema, legacy=legacy))
    invalid = []
    for key in instance:
        if key in evaluated:
            continue
        if next(validator.descend(instance[key], unevaluated, path=key, schema_path=key), None) is not None:
            invalid.append(key)
    if not invalid:
        return
    if unevaluated is False:
        yield ValidationError(
            f"Unevaluated properties are not allowed ({_extras(sorted(invalid, key=str))} unexpected)"
        )
    else:
        yield ValidationError(
            f"Unevaluated properties are not valid under the given schema ({_extras(invalid)} unevaluated and invalid)"
        )


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any, *, legacy: bool) -> Iterable[str]:
    """The keys of ``instance`` some keyword of ``schema`` (or of a schema it applies in place) evaluates."""
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[str] = []
    for reference, resolved in _references(validator, schema, legacy=legacy):
        trail, step = _TRAIL.get(), (id(resolved.contents), id(instance))
        if step in trail:  # the same schema again on the very same value: a loop
            raise RefCycle("$ref", reference)
        token = _TRAIL.set(trail | {step})
        try:
            keys += _evaluated_keys(
                validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
                instance,
                resolved.contents,
                legacy=legacy,
            )
        finally:
            _TRAIL.reset(token)
    if legacy:
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            value = schema.get(keyword)
            if validator.is_type(value, "boolean") and value:
                keys += instance.keys()
            elif validator.is_type(value, "object"):
                keys += [key for key in value if key in instance]
    else:
        properties = schema.get("properties")
        if validator.is_type(properties, "object"):
            keys += properties.keys() & instance.keys()
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            subschema = schema.get(keyword)
            if subschema is not None:
                keys += [key for key, value in instance.items() if _is_valid(validator, value, subschema)]
    patterns = [_regex("patternProperties", regex) for regex in schema.get("patternProperties", {})]
    _charge(len(patterns) * len(instance))
    keys += [key for key in instance if any(compiled.search(key) for compiled in patterns)]
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys += _evaluated_keys(validator, instance, subschema, legacy=legacy)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _is_valid(validator, instance, subschema):
                keys += _evaluated_keys(validator, instance, subschema, legacy=legacy)
    if "if" in schema:
        if _is_valid(validator, instance, schema["if"]):
            keys += _evaluated_keys(validator, instance, schema["if"], legacy=legacy)
            if "then" in schema:
                keys += _evaluated_keys(validator, instance, schema["then"], legacy=legacy)
        elif "else" in schema:
            keys += _evaluated_keys(validator, instance, schema["else"], legacy=legacy)
    return keys


def _references(validator: Any, schema: dict[str, Any], *, legacy: bool) -> Iterator[tuple[str, Any]]:
    """Each reference of ``schema`` (``$ref``, and ``$recursiveRef`` or ``$dynamicRef``) and what it resolves to."""
    if "$ref" in schema:
        yield schema["$ref"], validator._resolver.lookup(schema["$ref"])
    if legacy and "$recursiveRef" in schema:
        yield schema["$recursiveRef"], lookup_recursive_ref(validator._resolver)
    if not legacy and "$dynamicRef" in schema:
        yield schema["$dynamicRef"], validator._resolver.lookup(schema["$dynamicRef"])


def _is_valid(validator: Any, instance: Any, schema: Any) -> bool:
    return next(validator.descend(instance, schema), None) is None


#: Keys of the schema's own ``enum``/``const`` values, by the id of the value (kept alive by the entry).
_SCHEMA_KEYS: dict[int, tuple[Any, Any]] = {}


def _cached(value: Any, make: Any) -> Any:
    """``make(value)`` for a value of the schema, computed once while the schema lives."""
    hit = _SCHEMA_KEYS.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    made = make(value)
    if len(_SCHEMA_KEYS) >= 4096:
        _SCHEMA_KEYS.clear()
    _SCHEMA_KEYS[id(value)] = (value, made)
    return made


def _option_keys(options: Any) -> Any:
    if not isinstance(options, list):
        options = [options]
    return _cached(options, lambda values: frozenset(_key(value) for value in values))


def _key(value: Any) -> Any:
    """A hashable key, equal for JSON-equal values (1 == 1.0, true != 1, key order ignored); charges its size."""
    nodes = [0]
    key = _hashable(value, nodes)
    _charge(nodes[0])
    return key


def _hashable(value: Any, nodes: list[int]) -> Any:
    nodes[0] += 1
    kind = type(value)
    if kind is bool:
        return (bool, value)
    if kind is list or kind is tuple:
        return (list, tuple(_hashable(item, nodes) for item in value))
    if kind is dict:
        return (dict, frozenset((key, _hashable(item, nodes)) for key, item in value.items()))
    try:
        hash(value)
    except TypeError:
        return (object, id(value))
    return value
