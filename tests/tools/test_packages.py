"""Every tool package has the shape DESIGN.md gives it, and is in the catalog."""

import importlib
from pathlib import Path

import pytest

from colony.capability import ToolCapability
from colony.capability._schema import clean_schema, schema_mismatches
from colony.catalog import check_entry, load_registry

TOOLS = Path(__file__).resolve().parents[2] / "tools"
PACKAGES = sorted(path.name for path in TOOLS.iterdir() if path.is_dir() and not path.name.startswith(("_", ".")))


def test_there_are_the_catalog_tools():
    assert {"unit_convert", "pii_redact", "jsonschema_validate", "doc_summarize", "mager_sumner_shielding"} <= set(
        PACKAGES
    )


@pytest.mark.parametrize("name", PACKAGES)
def test_package_shape(name):
    folder = TOOLS / name
    for required in ("__init__.py", "capability.py", "README.md"):
        assert (folder / required).is_file(), f"tools/{name}/{required} is missing"
    package = importlib.import_module(f"tools.{name}")
    assert len(package.__all__) == 1, "a tool package exports its capability class and nothing else"
    cls = getattr(package, package.__all__[0])
    assert issubclass(cls, ToolCapability)
    assert cls.__module__ == f"tools.{name}.capability"
    assert cls.spec.name == name


@pytest.mark.parametrize("name", PACKAGES)
def test_package_is_registered_and_matches_its_spec(name):
    entry = load_registry()[name]
    cls = check_entry(entry)
    assert entry.location == f"tools/{name}"
    assert entry.capability == cls.spec.capabilities[0]


@pytest.mark.parametrize("name", PACKAGES)
def test_main_action_says_what_a_model_needs(name):
    cls = check_entry(load_registry()[name])
    definition = cls.actions()[cls.primary_action()]
    assert {"parameters", "returns"} <= definition.docstring_sections
    assert definition.summary.endswith(".")
    documented = set(definition.input_schema["properties"])
    assert all(definition.input_schema["properties"][field].get("description") for field in documented)
    if cls.spec.inputs_schema is not None:
        assert definition.input_schema == cls.spec.inputs_schema


@pytest.mark.parametrize("name", PACKAGES)
def test_declared_output_schema_matches_the_return_type(name):
    cls = check_entry(load_registry()[name])
    definition = cls.actions()[cls.primary_action()]
    assert cls.spec.outputs_schema is not None
    assert definition.output_adapter is not None, "the main action declares its result as a TypedDict"
    derived = clean_schema(definition.output_adapter.json_schema())
    assert schema_mismatches(cls.spec.outputs_schema, derived) == []
