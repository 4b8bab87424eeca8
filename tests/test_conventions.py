"""The conventions every tool keeps, checked over the whole catalog.

Layout: each tools/<name>/ has the files DESIGN.md names. Drift: what each
catalog capability declares is what a planner is offered. Text: every action
docstring says what it takes and what it returns. (The tools reference page is
generated when the site is built: tests/docs/test_site.py.)
"""

from pathlib import Path

import pytest

from colony.catalog import load_registry, planner_visible, resolve_capability

ROOT = Path(__file__).resolve().parent.parent
TOOL_PACKAGES = sorted(p for p in (ROOT / "tools").iterdir() if p.is_dir() and not p.name.startswith("__"))
ENTRIES = planner_visible(load_registry())


@pytest.mark.parametrize("package", TOOL_PACKAGES, ids=lambda p: p.name)
def test_tool_package_layout(package):
    for required in ("__init__.py", "capability.py", "README.md"):
        assert (package / required).is_file(), f"tools/{package.name}/ lacks {required}"
    init = (package / "__init__.py").read_text()
    assert "__all__" in init, f"tools/{package.name}/__init__.py must export exactly its capability"


@pytest.mark.parametrize("package", TOOL_PACKAGES, ids=lambda p: p.name)
def test_every_tool_package_is_in_the_catalog(package):
    locations = {entry.location for entry in ENTRIES.values()}
    assert f"tools/{package.name}" in locations, f"tools/{package.name} is not registered"


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_declared_actions_are_what_the_planner_is_offered(name):
    cls = resolve_capability(ENTRIES[name])
    offered = {entry.action for entry in cls().get_action_descriptions()}
    declared = set(cls.actions())
    assert offered == declared
    assert set(cls.spec.capabilities) <= offered
    assert ENTRIES[name].capability == cls.spec.capabilities[0]


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_every_action_docstring_has_args_and_returns(name):
    cls = resolve_capability(ENTRIES[name])
    for action, definition in cls.actions().items():
        assert definition.summary, f"{name}.{action} has no docstring"
        assert "returns" in definition.docstring_sections, f"{name}.{action} docstring lacks Returns:"
        if definition.takes_arguments:
            assert "parameters" in definition.docstring_sections, f"{name}.{action} docstring lacks Args:"
