"""Hostile calls to the catalog tools, run in a child process so that a regression hangs the child, not CI.

``python -m tests.security.hostile_calls`` makes every call in ``CASES`` and prints
one JSON line: case name -> {"outcome": "result" | "error", ...}. The arguments are
at the sizes the gateway lets through (256 KiB of arguments).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from colony.errors import ColonyError, ToolInputError
from tools.jsonschema_validate import JsonSchemaValidate
from tools.pii_redact import PiiRedact

ARGUMENT_CAP = 256 * 1024
EVIL = "a" * 30 + "!"
DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


def _nested(keyword: str, depth: int) -> tuple[dict[str, Any], list[Any]]:
    """A schema and a list nested ``depth`` levels deep (JSON's own parser stops near 1000)."""
    schema: dict[str, Any] = {}
    data: list[Any] = []
    for _ in range(depth):
        schema, data = {keyword: schema}, [data]
    return schema, data


def _validate(schema: Any, data: Any) -> tuple[str, str, dict[str, Any]]:
    return "jsonschema_validate", "validate_json", {"schema": schema, "data": data}


def _redact(**arguments: Any) -> tuple[str, str, dict[str, Any]]:
    return "pii_redact", "redact_pii", arguments


CASES: dict[str, Callable[[], tuple[str, str, dict[str, Any]]]] = {
    "redos_pattern": lambda: _validate({"pattern": "^(a+)+$"}, EVIL),
    "redos_pattern_long": lambda: _validate({"pattern": "^(a|aa)+$"}, "a" * (ARGUMENT_CAP // 2) + "!"),
    "redos_pattern_properties": lambda: _validate({"patternProperties": {"^(a+)+$": {"type": "string"}}}, {EVIL: 1}),
    "redos_additional_properties": lambda: _validate(
        {"patternProperties": {"^(a+)+$": {}}, "additionalProperties": False}, {EVIL: 1}
    ),
    "redos_unevaluated_properties": lambda: _validate(
        {"patternProperties": {"^(a+)+$": {}}, "unevaluatedProperties": False}, {EVIL: 1}
    ),
    "redos_behind_subschema_dialect": lambda: _validate(
        {"$schema": DRAFT_2020, "properties": {"x": {"$ref": "#"}}, "pattern": "^(a+)+$"}, {"x": EVIL}
    ),
    "redos_through_meta_schema": lambda: _validate(
        {"$dynamicAnchor": "meta", "pattern": "^(a+)+$", "$ref": DRAFT_2020}, {"not": EVIL}
    ),
    "backreference": lambda: _validate({"pattern": "^(a+)\\1$"}, "aa"),
    "format_regex_parens": lambda: _validate({"format": "regex"}, "(" * 5000),
    "pattern_parens": lambda: _validate({"pattern": "(" * 5000}, "x"),
    "ref_self": lambda: _validate({"$ref": "#"}, {"a": 1}),
    "ref_cycle": lambda: _validate(
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}, 1
    ),
    "ref_chain": lambda: _validate(
        {"$defs": {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(3000)}, "$ref": "#/$defs/d0"}, 1
    ),
    "deep_data": lambda: _validate({"type": "array"}, _nested("items", 5000)[1]),
    "deep_schema": lambda: _validate(_nested("not", 5000)[0], 1),
    "unique_items": lambda: _validate({"uniqueItems": True}, [{"k": i} for i in range(ARGUMENT_CAP // 12)]),
    "schema_times_data": lambda: _validate({"items": {"allOf": [{"type": "integer"}] * 2000}}, [0] * 60_000),
    "meta_schema_check": lambda: _validate({"allOf": [{}] * (ARGUMENT_CAP // 4)}, 1),
    "slow_format_many_times": lambda: _validate({"allOf": [{"format": "relative-json-pointer"}] * 2000}, "1" * 170_000),
    "amplifier_issue_14": lambda: _redact(text="x@y.io " * (218_000 // 7), replacement="R" * 8000),
    "amplifier_at_the_caps": lambda: _redact(text="a@b.cc " * (ARGUMENT_CAP // 7), replacement="R" * 64),
}


def run(name: str) -> dict[str, Any]:
    """Make one hostile call; describe its outcome."""
    tool_name, action, arguments = CASES[name]()
    tool = {"jsonschema_validate": JsonSchemaValidate, "pii_redact": PiiRedact}[tool_name]()
    try:
        result = asyncio.run(tool.invoke(action, arguments))
    except ToolInputError as error:
        fields = [problem.field for problem in error.errors]
        return {"outcome": "error", "type": type(error).__name__, "fields": fields, "message": str(error)}
    except ColonyError as error:
        return {"outcome": "error", "type": type(error).__name__, "fields": [], "message": str(error)}
    size = len(json.dumps(result, ensure_ascii=False).encode())
    text_size = len(json.dumps(arguments.get("text", ""), ensure_ascii=False))
    return {"outcome": "result", "result": result if size < 10_000 else None, "size": size, "text_size": text_size}


def main() -> None:
    print(json.dumps({name: run(name) for name in CASES}))


if __name__ == "__main__":
    main()
