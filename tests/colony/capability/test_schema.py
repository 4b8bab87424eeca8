import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import SchemaError

from colony.capability import compiled_validator
from colony.schemas import validator_class


def test_draft_follows_dollar_schema_with_2020_12_by_default():
    assert validator_class({"type": "object"}) is Draft202012Validator
    assert validator_class({"$schema": "http://json-schema.org/draft-07/schema#"}) is Draft7Validator
    assert validator_class({"$schema": "http://json-schema.org/draft-07/schema"}) is Draft7Validator
    draft7 = compiled_validator({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]})
    assert type(draft7).META_SCHEMA == Draft7Validator.META_SCHEMA
    assert not draft7.is_valid([1])


def test_unknown_dialect_is_a_schema_error():
    with pytest.raises(SchemaError, match=r"unknown \$schema 'https://example\.com/my-draft'"):
        validator_class({"$schema": "https://example.com/my-draft"})


def test_validators_are_compiled_once_per_distinct_schema():
    first = compiled_validator({"type": "object", "required": ["a"]})
    assert compiled_validator({"required": ["a"], "type": "object"}) is first
    assert compiled_validator({"type": "object", "required": ["b"]}) is not first


def test_format_checking_is_on():
    assert not compiled_validator({"format": "ipv4"}).is_valid("999.1.1.1")


@pytest.mark.parametrize(
    ("schema", "match"),
    [
        ({"type": "nonsense"}, "is not valid under any of the given schemas"),
        ({"minimum": "x"}, "'x' is not of type 'number'"),
        ({"const": {1, 2}}, "not a JSON document"),
        ({"maximum": float("nan")}, "not a JSON document"),
    ],
)
def test_invalid_schema_is_a_schema_error(schema, match):
    with pytest.raises(SchemaError, match=match):
        compiled_validator(schema)
