"""The jsonschema_validate tool (seed 004, tool:jsonschema_validate v1.1.0)."""

from __future__ import annotations

from typing import Annotated, Any

from jsonschema.exceptions import SchemaError
from pydantic import Field
from referencing.exceptions import Unresolvable
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolInputError, ToolSpec, action_executor
from colony.schemas import ValidationRefused, bounded_errors, compiled_validator
from colony.spec import CostModel, Licensing, ResourceRequirements

#: At most this many errors are listed; ``valid`` is false whenever there is one.
MAX_ERRORS = 100
#: A longer error message (they quote the value at fault) is cut to this many characters.
MAX_MESSAGE_CHARS = 1000

INPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "schema": {"type": "object", "description": "JSON Schema to validate against"},
        "data": {"description": "Data to validate (any type)"},
    },
    "required": ["schema", "data"],
    "additionalProperties": False,
}
OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "valid": {"type": "boolean", "description": "Whether data is valid"},
        "errors": {"type": "array", "description": "Validation error messages", "items": {"type": "string"}},
        "error_details": {
            "type": "array",
            "description": "Each error of `errors`, in the same order, with the JSON path of the value at fault",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "JSON path of the failing value, '$' for the root"},
                    "message": {"type": "string", "description": "The error message, as in `errors`"},
                },
                "required": ["path", "message"],
            },
        },
    },
    "required": ["valid", "errors", "error_details"],
}


class ErrorDetail(TypedDict):
    """One validation error and where in the data it is."""

    path: str
    message: str


class Validation(TypedDict):
    """The verdict, and every reason for it."""

    valid: bool
    errors: list[str]
    error_details: list[ErrorDetail]


class JsonSchemaValidate(LocalToolCapability):
    """Validate data against a JSON Schema with detailed error messages."""

    spec = ToolSpec(
        name="jsonschema_validate",
        version="2.0.0",
        description="Validate data against a JSON Schema with detailed error messages.",
        capabilities=("validate_json",),
        inputs_schema=INPUTS_SCHEMA,
        outputs_schema=OUTPUTS_SCHEMA,
        cost_model=CostModel(cpu_seconds=0.001),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.1, expected_wallclock_seconds=1),
        licensing=Licensing.MIT,
        policy_tags=("validation", "pure", "deterministic", "no_network"),
        references=("https://json-schema.org/specification", "https://python-jsonschema.readthedocs.io/"),
    )
    #: A hostile schema at the argument cap takes seconds of CPU before the work budget stops it.
    cpu_bound = True

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"validation", "json_schema"})

    @action_executor
    def validate_json(
        self,
        *,
        schema: Annotated[dict[str, Any], Field(description="JSON Schema to validate against")],
        data: Annotated[Any, Field(description="Data to validate (any type)")],
    ) -> Validation:
        """Check whether data conforms to a JSON Schema, listing every violation.

        The draft is the one the schema's `$schema` names (draft 3 to 2020-12),
        2020-12 when it names none. Formats (email, ipv4, date-time, ...) are
        checked. `$ref`s resolve within the schema only; nothing is fetched.
        Patterns (`pattern`, `patternProperties`, `format: regex`) run on RE2 in
        linear time: backreferences and lookaround are refused, not run.

        Args:
            schema: JSON Schema to validate against.
            data: Data to validate (any JSON value).

        Returns:
            {"valid": bool, "errors": [message, ...], "error_details": [{"path", "message"}, ...]}:
            messages are worded by the jsonschema library ("'email' is a required
            property"); each detail adds the JSON path of the value at fault ("$.user.age").
            At most 100 errors are listed, each message at most 1000 characters. A schema
            that is itself invalid, names an unknown `$schema`, has an unresolvable or
            looping `$ref` or a pattern RE2 cannot run is an input error on `schema`, never
            a verdict on the data. So is a schema over 1 MiB or nested over 64 levels; data
            nested over 64 levels, or too big to check against the schema within the work
            cap (2,000,000 steps, about schema size x data size), is an input error on `data`.
        """
        try:
            found = bounded_errors(compiled_validator(schema), data, max_errors=MAX_ERRORS)
        except ValidationRefused as error:
            raise ToolInputError.for_field(error.field, error.message) from None
        except SchemaError as error:
            where = "/".join(str(part) for part in error.path) or "<root>"
            raise ToolInputError.for_field(
                "schema", f"schema is not a valid JSON Schema at {where}: {error.message}", expected="a JSON Schema"
            ) from None
        except Unresolvable as error:
            raise ToolInputError.for_field(
                "schema", f"schema has a $ref that does not resolve (only refs within the schema are followed): {error}"
            ) from None
        errors = [ErrorDetail(path=error.json_path, message=_shortened(error.message)) for error in found]
        return Validation(valid=not errors, errors=[detail["message"] for detail in errors], error_details=errors)


def _shortened(message: str) -> str:
    """``message`` with the middle of a long quoted value cut: its start and what is wrong stay."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    head, tail = MAX_MESSAGE_CHARS * 6 // 10, MAX_MESSAGE_CHARS * 3 // 10
    return f"{message[:head]} ... ({len(message) - head - tail} characters cut) ... {message[-tail:]}"
