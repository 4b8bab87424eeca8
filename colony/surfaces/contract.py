"""A tool's call contract, and the changes to it that break a caller (seed 004: those need a MAJOR bump).

The contract is what a caller's code depends on, without the words: each input
property with its constraints (descriptions, titles and examples left out), which
inputs are required, and which output properties come back. Against a pinned
contract a change breaks callers when an input disappears (calls sending it are now
refused as unknown), an input becomes required, an input's constraints change (they
may narrow what is accepted), or an output property disappears.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from colony.surfaces.definitions import ToolDefinition

__all__ = ["breaking_changes", "contract_of"]

_WORDS = frozenset({"description", "title", "examples", "$comment"})


def contract_of(definition: ToolDefinition) -> dict[str, Any]:
    """The parts of ``definition`` a caller's code depends on, compactly (stored in a pin)."""
    inputs = definition.input_schema.get("properties", {})
    outputs = (definition.output_schema or {}).get("properties", {})
    return {
        "inputs": {name: _digest(schema) for name, schema in sorted(inputs.items())},
        "required": sorted(definition.input_schema.get("required", [])),
        "outputs": sorted(outputs),
    }


def breaking_changes(pinned: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What in ``now`` breaks a caller written against ``pinned``; empty when nothing does."""
    before, after = pinned.get("inputs", {}), now["inputs"]
    changes = [f"input {name!r} was removed" for name in sorted(set(before) - set(after))]
    changes += [
        f"input {name!r} changed its type or constraints"
        for name in sorted(set(before) & set(after))
        if before[name] != after[name]
    ]
    changes += [f"input {name!r} is now required" for name in sorted(set(now["required"]) - set(pinned["required"]))]
    changes += [f"output {name!r} was removed" for name in sorted(set(pinned["outputs"]) - set(now["outputs"]))]
    return changes


def _digest(schema: Any) -> str:
    """A short hash of a schema's constraints: its words removed at every level."""
    text = json.dumps(_constraints(schema), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _constraints(schema: Any, names: bool = False) -> Any:
    """``schema`` without its words; under ``properties`` and the like the keys are names, kept as they are."""
    if isinstance(schema, dict):
        return {
            key: _constraints(value, names=not names and key in _NAMED)
            for key, value in schema.items()
            if names or key not in _WORDS
        }
    if isinstance(schema, list):
        return [_constraints(item) for item in schema]
    return schema
