"""The unit_convert tool (seed 004, tool:unit_convert v1.0.0)."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolInputError, ToolSpec, action_executor
from colony.spec import CostModel, Licensing, ResourceRequirements

# Each unit as (dimension, factor to the dimension's base unit). Factors are the
# catalog's published ones (1 mi = 1609.34 m, 1 lb = 0.453592 kg), so results match
# its worked examples to the fourth decimal.
_LENGTH = {"m": 1.0, "ft": 0.3048, "km": 1000.0, "mi": 1609.34}
_MASS = {"kg": 1.0, "lb": 0.453592}
_ALIASES = {
    "m": "m",
    "meter": "m",
    "meters": "m",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "km": "km",
    "kilometer": "km",
    "kilometers": "km",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "c": "c",
    "celsius": "c",
    "f": "f",
    "fahrenheit": "f",
    "kg": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "lb": "lb",
    "lbs": "lb",
    "pound": "lb",
    "pounds": "lb",
}
_DIMENSION = {
    **dict.fromkeys(_LENGTH, "length"),
    **dict.fromkeys(_MASS, "mass"),
    "c": "temperature",
    "f": "temperature",
}
_DECIMALS = 4

INPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "value": {"type": "number", "description": "Numeric value to convert"},
        "from_unit": {"type": "string", "description": "Source unit (e.g., 'km', 'mi', 'c', 'f', 'kg', 'lb')"},
        "to_unit": {"type": "string", "description": "Target unit (e.g., 'km', 'mi', 'c', 'f', 'kg', 'lb')"},
    },
    "required": ["value", "from_unit", "to_unit"],
    "additionalProperties": False,
}
OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "value": {"type": "number", "description": "Converted value"},
        "from_unit": {"type": "string", "description": "Original unit"},
        "to_unit": {"type": "string", "description": "Target unit"},
    },
    "required": ["value", "from_unit", "to_unit"],
}


class Conversion(TypedDict):
    """A converted value, echoing the units as the caller wrote them."""

    value: float
    from_unit: str
    to_unit: str


def _canonical(unit: str, field: str) -> str:
    canonical = _ALIASES.get(unit.strip().lower())
    if canonical is None:
        raise ToolInputError.for_field(field, f"Unsupported unit: {unit}", expected=", ".join(sorted(_ALIASES)))
    return canonical


def convert(value: float, source: str, target: str) -> float:
    """``value`` from canonical unit ``source`` to canonical unit ``target``, unrounded."""
    if source in ("c", "f"):
        celsius = value if source == "c" else (value - 32.0) * 5.0 / 9.0
        return celsius if target == "c" else celsius * 9.0 / 5.0 + 32.0
    factors = _LENGTH if source in _LENGTH else _MASS
    return value * factors[source] / factors[target]


class UnitConvert(LocalToolCapability):
    """Convert between units of measurement (length, temperature, mass)."""

    spec = ToolSpec(
        name="unit_convert",
        version="1.0.1",
        description="Convert between units of measurement (length, temperature, mass).",
        capabilities=("convert_units",),
        inputs_schema=INPUTS_SCHEMA,
        outputs_schema=OUTPUTS_SCHEMA,
        cost_model=CostModel(cpu_seconds=0.00001),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.1, expected_wallclock_seconds=1),
        licensing=Licensing.MIT,
        policy_tags=("pure", "deterministic", "no_network"),
    )

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"units"})

    @action_executor
    def convert_units(
        self,
        *,
        value: Annotated[float, Field(description="Numeric value to convert")],
        from_unit: Annotated[str, Field(description="Source unit (e.g., 'km', 'mi', 'c', 'f', 'kg', 'lb')")],
        to_unit: Annotated[str, Field(description="Target unit (e.g., 'km', 'mi', 'c', 'f', 'kg', 'lb')")],
    ) -> Conversion:
        """Convert a value between two units of the same dimension.

        Units are case-insensitive. Length: m/meter(s), ft/foot/feet, km/kilometer(s),
        mi/mile(s). Temperature: c/celsius, f/fahrenheit. Mass: kg/kilogram(s),
        lb/lbs/pound(s). Results are rounded to 4 decimal places.

        Args:
            value: Numeric value to convert; must be finite.
            from_unit: Source unit.
            to_unit: Target unit, of the same dimension as from_unit.

        Returns:
            {"value": converted number, "from_unit": as given, "to_unit": as given}.
            An unknown unit ("Unsupported unit: X"), a conversion across dimensions
            (km to kg), a non-finite value or a result too large for a float is an
            input error naming the field.
        """
        if not math.isfinite(value):
            raise ToolInputError.for_field("value", f"value must be a finite number, got {value}")
        source, target = _canonical(from_unit, "from_unit"), _canonical(to_unit, "to_unit")
        if _DIMENSION[source] != _DIMENSION[target]:
            raise ToolInputError.for_field(
                "to_unit",
                f"Cannot convert {_DIMENSION[source]} ({from_unit}) to {_DIMENSION[target]} ({to_unit})",
                expected=f"a {_DIMENSION[source]} unit",
            )
        converted = round(convert(value, source, target), _DECIMALS)
        if not math.isfinite(converted):
            raise ToolInputError.for_field("value", f"{value} {from_unit} is too large to express in {to_unit}")
        result: Conversion = {"value": converted, "from_unit": from_unit, "to_unit": to_unit}
        return result
