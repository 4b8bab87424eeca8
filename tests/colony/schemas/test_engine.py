"""Caller-safe validators: stock answers on ordinary input, refusals on hostile input."""

from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft201909Validator, Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from colony.schemas import (
    MAX_NESTING,
    MAX_SCHEMA_BYTES,
    MAX_VALIDATION_STEPS,
    ValidationRefused,
    bounded_errors,
    compiled_validator,
)

EVIL_KEY = "a" * 40 + "!"
DRAFT_2019 = "https://json-schema.org/draft/2019-09/schema"
DRAFT_7 = "http://json-schema.org/draft-07/schema#"


def messages(schema: Any, data: Any, **limits: int) -> list[str]:
    return [error.message for error in bounded_errors(compiled_validator(schema), data, max_errors=100, **limits)]


def stock_messages(schema: Any, data: Any) -> list[str]:
    cls = {DRAFT_2019: Draft201909Validator, DRAFT_7: Draft7Validator}.get(schema.get("$schema"), Draft202012Validator)
    return [error.message for error in cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(data)]


ORDINARY = [
    ({"pattern": "^[a-z]+$"}, "abc"),
    ({"pattern": "^[a-z]+$"}, "ab1"),
    ({"patternProperties": {"^x-": {"type": "integer"}}}, {"x-a": 1, "x-b": "no", "y": "free"}),
    ({"patternProperties": {"^x-": {}}, "additionalProperties": False}, {"x-a": 1, "y": 2, "z": 3}),
    ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2}),
    ({"properties": {"a": {}}, "additionalProperties": {"type": "string"}}, {"a": 1, "b": 2, "c": "ok"}),
    (
        {"allOf": [{"properties": {"a": {}}}], "patternProperties": {"^p": {}}, "unevaluatedProperties": False},
        {"a": 1, "p1": 2, "q": 3},
    ),
    (
        {"if": {"required": ["k"]}, "then": {"properties": {"k": {}}}, "unevaluatedProperties": {"type": "integer"}},
        {"k": "x", "n": 1, "s": "bad"},
    ),
    (
        {"$schema": DRAFT_2019, "patternProperties": {"^p": {}}, "unevaluatedProperties": False},
        {"p1": 1, "other": 2},
    ),
    ({"$schema": DRAFT_7, "patternProperties": {"^[0-9]+$": {"type": "string"}}}, {"12": 3, "ab": 4}),
    ({"uniqueItems": True}, [1, 1.0]),
    ({"uniqueItems": True}, [1, True]),
    ({"uniqueItems": True}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
    ({"uniqueItems": True}, [[1], [True]]),
    ({"uniqueItems": True}, [0, False, None, "", [], {}]),
    ({"enum": [1, "1", [1, 2], {"a": None}]}, 1.0),
    ({"enum": [1, "1", [1, 2], {"a": None}]}, True),
    ({"enum": [1, "1", [1, 2], {"a": None}]}, [1.0, 2]),
    ({"enum": [1, "1", [1, 2], {"a": None}]}, {"a": None}),
    ({"const": {"a": [1, {"b": False}]}}, {"a": [1.0, {"b": False}]}),
    ({"const": {"a": [1, {"b": False}]}}, {"a": [1, {"b": 0}]}),
    ({"const": False}, 0),
    ({"format": "regex"}, "^[a-z]+(-[a-z]+)*$"),
    ({"format": "regex"}, "(unclosed"),
    ({"type": "array", "items": {"$ref": "#"}}, [[[], [[1]]]]),
]


@pytest.mark.parametrize(("schema", "data"), ORDINARY, ids=[str(i) for i in range(len(ORDINARY))])
def test_ordinary_input_gets_the_stock_answer(schema: Any, data: Any) -> None:
    assert messages(schema, data) == stock_messages(schema, data)


@pytest.mark.parametrize(
    ("schema", "data", "expected"),
    [
        ({"pattern": "^(a+)+$"}, EVIL_KEY, [f"{EVIL_KEY!r} does not match '^(a+)+$'"]),
        ({"patternProperties": {"^(a+)+$": {"type": "string"}}}, {EVIL_KEY: 1, "aa": 2}, ["2 is not of type 'string'"]),
        (
            {"patternProperties": {"^(a+)+$": {}}, "additionalProperties": False},
            {EVIL_KEY: 1},
            [f"{EVIL_KEY!r} does not match any of the regexes: '^(a+)+$'"],
        ),
        (
            {"patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False},
            {EVIL_KEY: 1, "aaa": 2},
            [f"Unevaluated properties are not allowed ({EVIL_KEY!r} was unexpected)"],
        ),
        (
            {"$schema": DRAFT_2019, "patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False},
            {EVIL_KEY: 1},
            [f"Unevaluated properties are not allowed ({EVIL_KEY!r} was unexpected)"],
        ),
        ({"propertyNames": {"pattern": "^(a|aa)+$"}}, {EVIL_KEY: 1}, [f"{EVIL_KEY!r} does not match '^(a|aa)+$'"]),
    ],
)
def test_backtracking_bombs_get_a_verdict(schema: Any, data: Any, expected: list[str]) -> None:
    assert messages(schema, data) == expected


@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        ({"properties": {"x": {"pattern": "(a)\\1"}}}, "pattern '(a)\\\\1': backreference '\\1'"),
        ({"pattern": "(?=a)"}, "pattern '(?=a)': lookaround '(?='"),
        ({"patternProperties": {"(?<!a)b": {}}}, "patternProperties '(?<!a)b': lookaround"),
        ({"pattern": "(" * 5000}, "groups nest more than 100 deep"),
    ],
)
def test_a_schema_pattern_re2_cannot_run_is_refused_naming_keyword_and_pattern(schema: Any, needle: str) -> None:
    with pytest.raises(ValidationRefused) as caught:
        compiled_validator(schema)
    assert caught.value.field == "schema"
    assert needle in caught.value.message


def test_draft4_pattern_property_keys_are_refused_when_first_matched() -> None:
    # Draft 4's meta-schema does not check patternProperties keys, so the refusal comes at match time.
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "patternProperties": {"(a)\\1": {}}}
    validator = compiled_validator(schema)
    with pytest.raises(ValidationRefused) as caught:
        bounded_errors(validator, {"aa": 1}, max_errors=10)
    assert caught.value.field == "schema" and caught.value.message.startswith("patternProperties '(a)\\\\1'")


def test_a_pattern_that_is_no_regex_is_a_schema_error_naming_it() -> None:
    with pytest.raises(SchemaError, match=r"pattern '\(a' is not a regular expression: missing \)"):
        compiled_validator({"properties": {"x": {"pattern": "(a"}}})


@pytest.mark.parametrize(("text", "needle"), [("(a)\\1", "backreference"), ("(" * 5000, "groups nest more than")])
def test_data_checked_as_a_regex_that_re2_cannot_run_is_refused_on_data(text: str, needle: str) -> None:
    with pytest.raises(ValidationRefused) as caught:
        messages({"format": "regex"}, text)
    assert caught.value.field == "data" and caught.value.message.startswith("format 'regex'")
    assert needle in caught.value.message


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"allOf": [{"$ref": "#"}]},
        {"unevaluatedProperties": False, "$ref": "#"},
        {"$dynamicAnchor": "node", "anyOf": [{"$dynamicRef": "#node"}]},
        {"$schema": DRAFT_2019, "$recursiveAnchor": True, "not": {"$recursiveRef": "#"}},
        {
            "$schema": DRAFT_7,
            "definitions": {"a": {"$ref": "#/definitions/a"}},
            "properties": {"x": {"$ref": "#/definitions/a"}},
        },
    ],
)
def test_a_reference_loop_that_never_reaches_the_data_is_refused(schema: Any) -> None:
    with pytest.raises(ValidationRefused, match="leads back to a schema already checking the same value") as caught:
        messages(schema, {"x": {"y": 1}})
    assert caught.value.field == "schema"


def test_recursion_that_moves_into_the_data_is_not_a_loop() -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    data: dict[str, Any] = {"children": []}
    for _ in range(30):
        data = {"children": [data, {"children": []}]}
    assert messages(tree, data) == []
    shared: dict[str, Any] = {"children": []}
    assert messages(tree, {"children": [shared, shared, {"children": [shared]}]}) == []


def test_a_reference_chain_deeper_than_python_recurses_is_refused() -> None:
    chain = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(1200)}
    schema = {"$defs": {**chain, "d1200": {"type": "integer"}}, "$ref": "#/$defs/d0"}
    with pytest.raises(ValidationRefused, match="nests deeper than the interpreter allows") as caught:
        messages(schema, 1)
    assert caught.value.field == "schema"


def nested(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_nesting_is_capped_for_schema_and_data() -> None:
    assert messages({"type": "object"}, nested(MAX_NESTING)) == []
    with pytest.raises(ValidationRefused, match=f"data nests arrays and objects more than {MAX_NESTING}") as data:
        messages({"type": "object"}, nested(MAX_NESTING + 1))
    assert data.value.field == "data"
    with pytest.raises(ValidationRefused, match=f"schema nests arrays and objects more than {MAX_NESTING}") as schema:
        compiled_validator(nested(MAX_NESTING + 1))
    assert schema.value.field == "schema"
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValidationRefused, match="data nests"):
        messages({}, loop)


def test_a_schema_over_the_size_cap_is_refused() -> None:
    huge = {"enum": ["x" * 1000] * (MAX_SCHEMA_BYTES // 1000 + 1)}
    with pytest.raises(ValidationRefused, match=f"at most {MAX_SCHEMA_BYTES} are compiled") as caught:
        compiled_validator(huge)
    assert caught.value.field == "schema"


def test_large_schemas_are_compiled_but_not_cached() -> None:
    large = {"enum": [f"value-{i}" for i in range(4000)]}
    assert compiled_validator(large) is not compiled_validator(large)
    small = {"enum": ["a", "b"]}
    assert compiled_validator(small) is compiled_validator(small)


def test_work_past_the_budget_is_refused_and_work_within_it_is_not() -> None:
    schema = {"items": {"allOf": [{"type": "integer"}] * 50}}
    assert messages(schema, [1] * 100, max_steps=100_000) == []
    with pytest.raises(ValidationRefused, match="takes more than 10,000 steps") as caught:
        messages(schema, [1] * 100, max_steps=10_000)
    assert caught.value.field == "data"


def test_the_default_budget_applies() -> None:
    row = [0] * 10_000
    with pytest.raises(ValidationRefused, match=f"takes more than {MAX_VALIDATION_STEPS:,} steps"):
        messages({"items": {"maxItems": 10_000}}, [row] * (MAX_VALIDATION_STEPS // 10_000 + 1))


def test_unique_items_on_many_objects_is_linear() -> None:
    # Pairwise comparison of 20,000 objects is 200 million comparisons; hashing is one pass.
    assert messages({"uniqueItems": True}, [{"id": i} for i in range(20_000)]) == []


def test_outside_a_bounded_run_nothing_is_counted() -> None:
    validator = compiled_validator({"items": {"allOf": [{"type": "integer"}] * 50}})
    assert list(validator.iter_errors([1] * 300)) == []
    with pytest.raises(ValidationRefused):
        bounded_errors(validator, [1] * 300, max_errors=1, max_steps=1000)


DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(
    ("schema", "data"),
    [
        ({"properties": {"x": {"$schema": DRAFT_2020, "pattern": "^(a+)+$"}}}, {"x": EVIL_KEY}),
        ({"$schema": DRAFT_2020, "properties": {"x": {"$ref": "#"}}, "pattern": "^(a+)+$"}, {"x": EVIL_KEY}),
        (
            {"$schema": DRAFT_2019, "$recursiveAnchor": True, "items": {"$recursiveRef": "#"}, "pattern": "^(a+)+$"},
            [EVIL_KEY],
        ),
    ],
)
def test_a_subschema_naming_the_draft_is_still_checked_by_re2(schema: Any, data: Any) -> None:
    # jsonschema picks a subschema's class from its $schema; the stock class would backtrack here.
    assert messages(schema, data) == [f"{EVIL_KEY!r} does not match '^(a+)+$'"]


def test_a_subschema_naming_another_draft_is_refused() -> None:
    schema = {"properties": {"x": {"$schema": DRAFT_7, "type": "string"}}}
    with pytest.raises(ValidationRefused, match="another draft than the root's") as caught:
        compiled_validator(schema)
    assert caught.value.field == "schema"


def test_a_draft_named_inside_data_a_reference_could_reach_is_refused() -> None:
    schema = {"const": {"$schema": DRAFT_2020, "pattern": "^(a+)+$"}, "properties": {"x": {"$ref": "#/const"}}}
    with pytest.raises(ValidationRefused, match="at /const is not in a subschema"):
        compiled_validator(schema)


def test_references_stay_inside_the_schema_even_to_the_meta_schemas() -> None:
    # The meta-schema's $dynamicRef would evaluate this schema again with the stock class.
    schema = {"$dynamicAnchor": "meta", "pattern": "^(a+)+$", "$ref": DRAFT_2020}
    validator = compiled_validator(schema)
    with pytest.raises(Unresolvable):
        bounded_errors(validator, {"not": EVIL_KEY}, max_errors=10)


def test_checks_that_walk_long_strings_are_charged_by_length() -> None:
    # One relative-json-pointer check walks its string in Python; 50 of them over 100,000 digits
    # would be cheap by count and slow by length.
    schema = {"allOf": [{"format": "relative-json-pointer"}] * 50}
    assert messages(schema, "1" * 1000, max_steps=1_000_000) == []
    with pytest.raises(ValidationRefused, match="takes more than 1,000,000 steps"):
        messages(schema, "1" * 100_000, max_steps=1_000_000)
