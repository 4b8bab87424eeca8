import json
import subprocess
import sys
from pathlib import Path

import pytest

from colony.catalog import (
    ToolEntry,
    check_entry,
    discover_tools,
    load_registry,
    planner_visible,
    registry_path,
    resolve_capability,
    save_registry,
    upsert_tool,
)
from colony.errors import CapabilityResolutionError, RegistryFileError, ToolEntrySpecMismatch

UNIT_CONVERT = ToolEntry(
    name="unit_convert",
    purpose="Convert units.",
    location="tools/unit_convert",
    capability="convert_units",
    capability_fqn="tools.unit_convert.UnitConvert",
)
STUB = ToolEntry(name="cad_kernel", purpose="Build-vs-buy candidate.", capability="make_solid")


def write(root: Path, document: object) -> Path:
    path = registry_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_repository_catalog_loads_and_every_entry_checks():
    entries = load_registry()
    assert "unit_convert" in entries
    for entry in entries.values():
        check_entry(entry)


def test_discovery_reads_json_without_importing_tools(tmp_path):
    save_registry({"unit_convert": UNIT_CONVERT, "cad_kernel": STUB}, registry_path(tmp_path))
    code = (
        "import sys; from colony.catalog import discover_tools; "
        f"found = discover_tools(__import__('pathlib').Path({str(tmp_path)!r})); "
        "print(sorted(found.tools), any(m.startswith('tools') for m in sys.modules))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "['cad_kernel', 'unit_convert'] False"


def test_stubs_are_listed_but_not_planner_visible(tmp_path):
    save_registry({"unit_convert": UNIT_CONVERT, "cad_kernel": STUB}, registry_path(tmp_path))
    tools = discover_tools(tmp_path).tools
    assert set(tools) == {"unit_convert", "cad_kernel"}
    assert set(planner_visible(tools)) == {"unit_convert"}
    with pytest.raises(CapabilityResolutionError, match="catalog-only stub"):
        resolve_capability(STUB)


def test_upsert_checks_the_spec_and_writes(tmp_path):
    path = registry_path(tmp_path)
    upsert_tool(UNIT_CONVERT, path)
    upsert_tool(STUB, path)
    assert set(load_registry(path)) == {"unit_convert", "cad_kernel"}
    wrong = UNIT_CONVERT.model_copy(update={"capability": "teleport"})
    with pytest.raises(ToolEntrySpecMismatch, match=r"'teleport' is not in .*spec.capabilities"):
        upsert_tool(wrong, path)
    assert load_registry(path)["unit_convert"].capability == "convert_units"


@pytest.mark.parametrize(
    ("fqn", "message"),
    [
        ("tools.nowhere.Missing", "cannot import 'tools.nowhere'"),
        ("tools.unit_convert.Missing", "does not name a ToolCapability"),
        ("json.JSONDecoder", "does not name a ToolCapability"),
        ("Lonely", "not a dotted import path"),
    ],
)
def test_unresolvable_fqn_is_a_clear_error(fqn, message):
    with pytest.raises(CapabilityResolutionError, match=message):
        resolve_capability(fqn)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"tools": "nope"}, "not a tool registry: tools"),
        ({"tools": [{"name": "a"}, {"purpose": "no name"}]}, r"entry 1: name: Field required"),
        ({"tools": [{"name": "a", "colour": "red"}]}, r"entry 0 \('a'\): colour: Extra inputs"),
        ({"tools": [{"name": "a"}, {"name": "a"}]}, "listed twice"),
    ],
)
def test_corrupt_registry_names_file_and_entry(tmp_path, document, message):
    path = write(tmp_path, document)
    with pytest.raises(RegistryFileError, match=message) as caught:
        load_registry(path)
    assert str(path) in str(caught.value)


def test_missing_registry_file(tmp_path):
    with pytest.raises(RegistryFileError, match="no tool registry here"):
        discover_tools(tmp_path)


def test_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = registry_path(tmp_path)
    save_registry({"unit_convert": UNIT_CONVERT}, path)
    before = path.read_bytes()

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", explode)
    with pytest.raises(OSError, match="disk full"):
        save_registry({"unit_convert": UNIT_CONVERT, "cad_kernel": STUB}, path)
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["tool-registry.json"]
