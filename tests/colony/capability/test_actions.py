from typing import Any

import pytest

from colony import ToolInputError
from colony.capability import AgentCapability, action_executor


class Echo(AgentCapability):
    """Echoes its arguments; its parameter names shadow BaseModel attributes."""

    @action_executor
    def echo(self, *, schema: dict[str, Any], json: str = "x", copy: int = 1) -> dict[str, Any]:
        """Return the arguments.

        Args:
            schema: Any object.
            json: Any string.
            copy: Any integer.
        """
        return {"schema": schema, "json": json, "copy": copy}


async def test_parameters_named_like_basemodel_attributes_keep_their_names():
    assert await Echo().invoke("echo", {"schema": {"a": 1}, "json": "y"}) == {
        "schema": {"a": 1},
        "json": "y",
        "copy": 1,
    }
    assert Echo().echo(schema={}, copy=2) == {"schema": {}, "json": "x", "copy": 2}
    definition = Echo.actions()["echo"]
    assert set(definition.input_schema["properties"]) == {"schema", "json", "copy"}
    assert definition.input_schema["required"] == ["schema"]
    assert definition.input_schema["properties"]["schema"]["description"] == "Any object."


async def test_shadowing_parameter_errors_name_the_parameter():
    with pytest.raises(ToolInputError) as caught:
        await Echo().invoke("echo", {"schema": "nope", "schema_": {}})
    fields = {error.field for error in caught.value.errors}
    assert fields == {"schema", "schema_"}
