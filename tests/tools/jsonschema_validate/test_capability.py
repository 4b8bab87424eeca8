import pytest

from colony import ToolInputError
from tests.seed004 import NESTED_SCHEMA
from tools.jsonschema_validate import JsonSchemaValidate


@pytest.fixture
def tool():
    return JsonSchemaValidate()


async def validate(tool, schema, data):
    return await tool.invoke("validate_json", {"schema": schema, "data": data})


async def test_seed_example_1_valid_user(tool):
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "number", "minimum": 0},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["name", "age"],
    }
    result = await validate(tool, schema, {"name": "Alice", "age": 30, "email": "alice@example.com"})
    assert result == {"valid": True, "errors": [], "error_details": []}


async def test_seed_example_2_missing_required_field(tool):
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
        "required": ["name", "email"],
    }
    result = await validate(tool, schema, {"name": "Bob"})
    assert result["valid"] is False
    assert result["errors"] == ["'email' is a required property"]
    assert result["error_details"] == [{"path": "$", "message": "'email' is a required property"}]


async def test_seed_example_3_type_validation(tool):
    schema = {"type": "object", "properties": {"count": {"type": "integer"}, "price": {"type": "number"}}}
    result = await validate(tool, schema, {"count": "not_a_number", "price": 29.99})
    assert result["valid"] is False
    assert result["errors"] == ["'not_a_number' is not of type 'integer'"]
    assert result["error_details"][0]["path"] == "$.count"


async def test_seed_example_4_array_validation(tool):
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
            "required": ["id", "name"],
        },
        "minItems": 1,
    }
    result = await validate(tool, schema, [{"id": 1, "name": "Item 1"}, {"id": 2, "name": "Item 2"}])
    assert result["valid"] is True
    broken = await validate(tool, schema, [{"id": 1, "name": "Item 1"}, {"id": "2"}])
    assert broken["error_details"] == [
        {"path": "$[1].id", "message": "'2' is not of type 'integer'"},
        {"path": "$[1]", "message": "'name' is a required property"},
    ]
    assert (await validate(tool, schema, []))["errors"] == ["[] should be non-empty"]


async def test_seed_example_5_enum_validation(tool):
    schema = {
        "type": "object",
        "properties": {"status": {"type": "string", "enum": ["pending", "active", "completed"]}},
        "required": ["status"],
    }
    result = await validate(tool, schema, {"status": "invalid_status"})
    assert result["valid"] is False
    assert result["errors"] == ["'invalid_status' is not one of ['pending', 'active', 'completed']"]


async def test_seed_example_6_complex_nested_schema(tool):
    data = {
        "user": {
            "name": "Alice",
            "contacts": [{"type": "email", "value": "alice@example.com"}, {"type": "phone", "value": "555-1234"}],
        }
    }
    assert (await validate(tool, NESTED_SCHEMA, data))["valid"] is True
    data["user"]["contacts"][1]["type"] = "fax"
    result = await validate(tool, NESTED_SCHEMA, data)
    assert result["error_details"] == [
        {"path": "$.user.contacts[1].type", "message": "'fax' is not one of ['email', 'phone']"}
    ]


async def test_formats_are_checked(tool):
    schema = {"type": "object", "properties": {"email": {"format": "email"}, "ip": {"format": "ipv4"}}}
    result = await validate(tool, schema, {"email": "not-an-email", "ip": "256.1.1.1"})
    assert result["errors"] == ["'not-an-email' is not a 'email'", "'256.1.1.1' is not a 'ipv4'"]


async def test_draft_follows_dollar_schema(tool):
    tuple_items = {"items": [{"type": "string"}, {"type": "integer"}]}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_items}
    assert (await validate(tool, draft7, ["a", "b"]))["errors"] == ["'b' is not of type 'integer'"]
    # In 2020-12 (the default) an array-valued "items" is not a schema at all.
    with pytest.raises(ToolInputError, match="schema is not a valid JSON Schema at items"):
        await validate(tool, tuple_items, ["a", "b"])


async def test_errors_are_capped(tool):
    result = await validate(tool, {"items": {"type": "string"}}, list(range(250)))
    assert result["valid"] is False
    assert len(result["errors"]) == len(result["error_details"]) == 100


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "whatever"}, "schema is not a valid JSON Schema at type: 'whatever' is not valid"),
        ({"properties": {"age": {"minimum": "zero"}}}, "at properties/age/minimum: 'zero' is not of type 'number'"),
        ({"$schema": "https://example.com/draft-99"}, "unknown \\$schema 'https://example.com/draft-99'"),
        ({"$ref": "#/$defs/missing"}, "\\$ref that does not resolve"),
        ({"$ref": "https://example.com/remote.json"}, "\\$ref that does not resolve"),
    ],
)
async def test_invalid_schema_is_reported_as_such(tool, schema, message):
    with pytest.raises(ToolInputError, match=message) as caught:
        await validate(tool, schema, {"any": "data"})
    assert caught.value.action == "validate_json"
    assert [error.field for error in caught.value.errors] == ["schema"]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"schema": [1, 2], "data": 1}, "schema"),
        ({"data": 1}, "schema"),
        ({"schema": {}}, "data"),
        ({"schema": {}, "data": 1, "strict": True}, "strict"),
    ],
)
async def test_bad_arguments_name_the_field(tool, arguments, field):
    with pytest.raises(ToolInputError) as caught:
        await tool.invoke("validate_json", arguments)
    assert [error.field for error in caught.value.errors] == [field]


async def test_null_data_is_data(tool):
    assert (await validate(tool, {"type": "null"}, None))["valid"] is True
    assert (await validate(tool, {"type": "object"}, None))["errors"] == ["None is not of type 'object'"]


def test_spec_carries_the_seed_identity():
    spec = JsonSchemaValidate.spec
    assert (spec.tool_id, spec.version, spec.deterministic) == ("tool:jsonschema_validate", "2.0.0", True)
    assert spec.policy_tags == ("validation", "pure", "deterministic", "no_network")
    assert spec.required_capabilities == ("tool:jsonschema_validate",)
    assert JsonSchemaValidate.actions()["validate_json"].input_schema == spec.inputs_schema


def nested_list(depth):
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


async def test_a_backtracking_bomb_gets_its_verdict(tool):
    result = await validate(tool, {"pattern": "^(a+)+$"}, "a" * 30 + "!")
    assert result["valid"] is False
    assert result["error_details"] == [{"path": "$", "message": f"{'a' * 30 + '!'!r} does not match '^(a+)+$'"}]


@pytest.mark.parametrize(
    ("schema", "data", "field", "message"),
    [
        ({"pattern": "(a)\\1"}, "aa", "schema", "pattern '(a)\\\\1': backreference '\\1' cannot run in linear time"),
        ({"patternProperties": {"(?=x)": {}}}, {}, "schema", "patternProperties '(?=x)': lookaround '(?='"),
        ({"format": "regex"}, "(" * 5000, "data", "format 'regex'"),
        ({"$ref": "#"}, 1, "schema", "$ref '#' leads back to a schema already checking the same value"),
        ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "items": {"$ref": "#/$defs/a"}}, [1], "schema", "leads back"),
        ({"type": "array"}, nested_list(70), "data", "nests arrays and objects more than 64"),
    ],
)
async def test_hostile_input_is_an_input_error_on_the_field_at_fault(tool, schema, data, field, message):
    with pytest.raises(ToolInputError) as caught:
        await validate(tool, schema, data)
    assert [error.field for error in caught.value.errors] == [field]
    assert message in caught.value.errors[0].message
    assert caught.value.action == "validate_json"


async def test_a_pattern_that_is_no_regex_in_data_is_a_verdict(tool):
    result = await validate(tool, {"format": "regex"}, "(unclosed")
    assert result["errors"] == ["'(unclosed' is not a 'regex'"]


async def test_long_messages_are_shortened(tool):
    big = ["x" * 50] * 100
    result = await validate(tool, {"type": "object"}, big)
    (message,) = result["errors"]
    assert len(message) <= 1000 and "characters cut) ..." in message
    assert message.startswith("['xxxx") and message.endswith("'] is not of type 'object'")
