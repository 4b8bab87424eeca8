import pytest

from colony import ToolInputError
from tools.unit_convert import UnitConvert


@pytest.fixture
def tool():
    return UnitConvert()


@pytest.mark.parametrize(
    ("value", "from_unit", "to_unit", "expected"),
    [
        (10, "miles", "km", 16.0934),  # seed 004 example 1
        (100, "celsius", "fahrenheit", 212.0),  # example 2
        (150, "pounds", "kg", 68.0388),  # example 3
        (100, "feet", "meters", 30.48),  # example 4
    ],
)
async def test_seed_examples_value_for_value(tool, value, from_unit, to_unit, expected):
    result = await tool.invoke("convert_units", {"value": value, "from_unit": from_unit, "to_unit": to_unit})
    assert result == {"value": expected, "from_unit": from_unit, "to_unit": to_unit}


@pytest.mark.parametrize(
    ("value", "from_unit", "to_unit", "expected"),
    [
        (1, "KM", "M", 1000.0),
        (1, "Mile", "FT", 5279.9869),  # the catalog's 1609.34 m, not the international 1609.344 m
        (32, "F", "c", 0.0),
        (-40, "c", "f", -40.0),
        (1, "kg", "LBS", 2.2046),
        (1, "kilogram", "pound", 2.2046),
        (2.5, "kilometers", "kilometer", 2.5),
        (1609.34, "meter", "mi", 1.0),
        (0.3048, "m", "foot", 1.0),
    ],
)
def test_aliases_are_case_insensitive_and_rounded_to_four_places(tool, value, from_unit, to_unit, expected):
    assert tool.convert_units(value=value, from_unit=from_unit, to_unit=to_unit)["value"] == expected


def test_round_trip_returns_the_value(tool):
    there = tool.convert_units(value=42.0, from_unit="lb", to_unit="kg")["value"]
    assert tool.convert_units(value=there, from_unit="kg", to_unit="lb")["value"] == pytest.approx(42.0, abs=1e-3)


async def test_unknown_unit_is_named(tool):
    with pytest.raises(ToolInputError, match=r"^Unsupported unit: invalid_unit$") as caught:
        await tool.invoke("convert_units", {"value": 10, "from_unit": "invalid_unit", "to_unit": "km"})
    assert caught.value.action == "convert_units"
    assert caught.value.errors[0].field == "from_unit"


async def test_across_dimensions_is_refused(tool):
    with pytest.raises(ToolInputError, match=r"Cannot convert length \(km\) to mass \(kg\)") as caught:
        await tool.invoke("convert_units", {"value": 1, "from_unit": "km", "to_unit": "kg"})
    assert caught.value.errors[0].field == "to_unit"
    assert caught.value.errors[0].expected == "a length unit"


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_value_is_refused(tool, value):
    with pytest.raises(ToolInputError, match="finite") as caught:
        tool.convert_units(value=value, from_unit="m", to_unit="ft")
    assert caught.value.errors[0].field == "value"


def test_overflowing_result_is_refused(tool):
    with pytest.raises(ToolInputError, match="too large to express in km"):
        tool.convert_units(value=1e308, from_unit="mi", to_unit="km")


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"value": "10", "from_unit": "m", "to_unit": "ft"}, "value", "valid number"),
        ({"value": True, "from_unit": "m", "to_unit": "ft"}, "value", "valid number"),
        ({"value": 1, "from_unit": 3, "to_unit": "ft"}, "from_unit", "valid string"),
        ({"from_unit": "m", "to_unit": "ft"}, "value", "required argument is missing"),
        ({"value": 1, "from_unit": "m", "to_unit": "ft", "precision": 2}, "precision", "unexpected argument"),
    ],
)
async def test_bad_arguments_name_the_field(tool, arguments, field, message):
    with pytest.raises(ToolInputError) as caught:
        await tool.invoke("convert_units", arguments)
    assert [(error.field, message in error.message) for error in caught.value.errors] == [(field, True)]


def test_spec_carries_the_seed_identity():
    spec = UnitConvert.spec
    assert (spec.tool_id, spec.version, spec.deterministic) == ("tool:unit_convert", "1.0.1", True)
    assert spec.policy_tags == ("pure", "deterministic", "no_network")
    assert spec.required_capabilities == ("tool:unit_convert",)
    assert UnitConvert.actions()["convert_units"].input_schema == spec.inputs_schema
