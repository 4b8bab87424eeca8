"""A catalog with two broken entries beside a good one, each of which must fail alone.

``missing_class`` names a class its module does not have; ``raises_at_import`` names
a module that raises while it is imported (``raises_at_import.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

MISSING_CLASS = "missing_class"
RAISES_AT_IMPORT = "raises_at_import"
IMPORT_FAILURE = "the tool's settings file is missing"
ENTRIES = [
    {"name": "unit_convert", "capability": "convert_units", "capability_fqn": "tools.unit_convert.UnitConvert"},
    {"name": MISSING_CLASS, "capability": "convert_units", "capability_fqn": "tools.unit_convert.NoSuchConverter"},
    {
        "name": RAISES_AT_IMPORT,
        "capability": "anything",
        "capability_fqn": "tests.colony.surfaces.raises_at_import.RaisesAtImport",
    },
]
# What each broken entry's reason says: which entry, and what failed.
REASONS = {
    MISSING_CLASS: "module 'tools.unit_convert' has no 'NoSuchConverter'",
    RAISES_AT_IMPORT: f"importing 'tests.colony.surfaces.raises_at_import' raised RuntimeError: {IMPORT_FAILURE}",
}


def broken_repo(root: Path) -> Path:
    """A repository root (for COLONY_REPO_ROOT) whose catalog is ``unit_convert`` and the two broken entries."""
    (root / ".colony").mkdir(parents=True, exist_ok=True)
    (root / ".colony" / "tool-registry.json").write_text(json.dumps({"version": 1, "tools": ENTRIES}))
    return root
