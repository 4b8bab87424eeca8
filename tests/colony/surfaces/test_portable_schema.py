"""Portable schemas: no type lists, no untyped subschemas, and exactly the same JSON accepted."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from colony.surfaces.portable_schema import ANY_JSON, portability_problems, portable_schema

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "gaps": {"type": ["array", "null"], "items": {"type": "number", "minimum": 0}, "maxItems": 3},
            "stdin": {"type": ["string", "null"], "maxLength": 4, "description": "text"},
            "count": {"type": ["integer", "null", "string"], "minimum": 1, "minLength": 2},
            "one": {"type": ["boolean"]},
            "data": {"description": "anything"},
            "flag": True,
            "files": {"type": ["object", "null"], "additionalProperties": {"type": "string"}, "required": ["a"]},
            "pick": {"type": ["string", "null"], "enum": ["F", "C", None]},
            "both": {"type": ["number", "null"], "anyOf": [{"maximum": 10}, {"type": "null"}]},
            "never": False,
            "loose": {"type": "object", "additionalProperties": True, "dependencies": {"a": ["b"], "b": {}}},
            "notnull": {"not": {"type": "null"}, "if": {}},
        },
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "object", "properties": {"x": {}}, "required": ["x"]}},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats(-5, 20, allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("abx"), inner, max_size=3),
    max_leaves=8,
)
documents = st.fixed_dictionaries(
    {},
    optional={name: json_values for name in ("gaps", "stdin", "count", "one", "data", "flag", "files", "pick", "both")},
)


def test_type_lists_become_single_type_branches_carrying_their_keywords() -> None:
    served = portable_schema(SCHEMAS[0])["properties"]
    assert served["gaps"] == {
        "anyOf": [{"type": "array", "items": {"type": "number", "minimum": 0}, "maxItems": 3}, {"type": "null"}]
    }
    assert served["stdin"] == {
        "description": "text",
        "anyOf": [{"type": "string", "maxLength": 4}, {"type": "null"}],
    }
    assert served["count"]["anyOf"] == [
        {"type": "integer", "minimum": 1},
        {"type": "null"},
        {"type": "string", "minLength": 2},
    ]
    assert served["one"] == {"type": "boolean"}
    assert served["files"]["anyOf"][0] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "required": ["a"],
    }
    assert served["pick"]["enum"] == ["F", "C", None]
    (own,) = served["both"]["allOf"]  # the schema's own anyOf, kept as a further condition
    assert own["anyOf"] == [{"maximum": 10}, {"type": "null"}]


def test_untyped_subschemas_become_any_json_keeping_their_annotations() -> None:
    served = portable_schema(SCHEMAS[0])["properties"]
    assert served["data"] == {"description": "anything", **ANY_JSON}
    assert served["flag"] == ANY_JSON
    assert served["never"] == {"not": {}}
    assert served["loose"] == {
        "type": "object",
        "additionalProperties": True,  # a boolean that means "allowed": every client reads it
        "dependencies": {"a": ["b"], "b": ANY_JSON},
    }
    assert served["notnull"] == {"not": {"type": "null"}, "if": ANY_JSON}
    assert portable_schema(SCHEMAS[1])["items"]["properties"]["x"] == ANY_JSON
    assert portable_schema({"type": "object", "properties": {"n": {"not": {}}}})["properties"]["n"] == {"not": {}}


@pytest.mark.parametrize("schema", SCHEMAS)
def test_nothing_is_left_to_warn_about_and_the_result_is_a_valid_schema(schema: dict[str, Any]) -> None:
    assert portability_problems(schema)  # the originals have problems to remove
    served = portable_schema(schema)
    assert portability_problems(served) == []
    Draft202012Validator.check_schema(served)
    Draft7Validator.check_schema(served)  # the TypeScript SDK's Ajv reads draft-07
    assert portable_schema(served) == served


def test_problems_are_named_by_pointer() -> None:
    problems = portability_problems(SCHEMAS[0])
    assert "#/properties/gaps: type is a list ['array', 'null']; use anyOf branches with one type each" in problems
    assert any(problem.startswith("#/properties/data: no validation keyword") for problem in problems)
    assert "#/properties/flag: a bare true where a schema object is expected" in problems
    assert "#/properties/never: a bare false where a schema object is expected" in problems
    assert any(problem.startswith("#/properties/loose/dependencies/b: no validation") for problem in problems)
    assert not any(problem.startswith("#/properties/loose: ") for problem in problems)
    remote = {"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}, "n": {"not": {}}}}
    assert portability_problems(remote) == [
        "#/properties/r: $ref 'https://example.com/s.json' points outside the schema, and clients do not fetch it"
    ]


@settings(max_examples=300, deadline=None)
@given(documents)
@example({"gaps": [1, 2.5], "stdin": "ab", "count": 3, "files": {"a": "x"}, "pick": "F", "both": 9, "data": [{}]})
@example({"gaps": [1, -1]})
@example({"count": "x"})
@example({"files": {"b": "x"}})
@example({"both": 11})
def test_the_same_documents_are_accepted(document: dict[str, Any]) -> None:
    original = Draft202012Validator(SCHEMAS[0])
    served = Draft202012Validator(portable_schema(SCHEMAS[0]))
    assert original.is_valid(document) == served.is_valid(document)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("xy"), json_values, max_size=2), max_size=3))
def test_the_same_arrays_are_accepted(document: list[Any]) -> None:
    original = Draft202012Validator(SCHEMAS[1])
    served = Draft202012Validator(portable_schema(SCHEMAS[1]))
    assert original.is_valid(document) == served.is_valid(document)
