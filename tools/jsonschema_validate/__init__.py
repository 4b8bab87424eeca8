"""jsonschema_validate: check a JSON document against a JSON Schema."""

from tools.jsonschema_validate.capability import JsonSchemaValidate

__all__ = ["JsonSchemaValidate"]
