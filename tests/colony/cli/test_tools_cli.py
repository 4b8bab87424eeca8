import json

from typer.testing import CliRunner

from colony.catalog import ToolEntry, registry_path, save_registry
from colony.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_list_json_includes_the_catalog():
    result = run("tools", "list", "--json")
    assert result.exit_code == 0
    assert "unit_convert" in {entry["name"] for entry in json.loads(result.stdout)}


def test_show_json_has_card_schemas_and_preconditions():
    result = run("tools", "show", "unit_convert", "--json")
    assert result.exit_code == 0
    shown = json.loads(result.stdout)
    assert shown["spec"]["tool_id"] == "tool:unit_convert"
    assert shown["preconditions"]["ok"] is True
    assert {action["name"] for action in shown["actions"]} == {"check_preconditions", "convert_units"}


def test_call_runs_the_main_action():
    result = run("tools", "call", "unit_convert", '{"value": 100, "from_unit": "celsius", "to_unit": "fahrenheit"}')
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"value": 212.0, "from_unit": "celsius", "to_unit": "fahrenheit"}


def test_call_named_action():
    result = run("tools", "call", "unit_convert", "{}", "--action", "check_preconditions", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["result"]["tool"] == "unit_convert"


def test_bad_calls_exit_non_zero_with_the_reason():
    bad_args = run("tools", "call", "unit_convert", '{"value": "ten"}', "--json")
    assert bad_args.exit_code == 1
    error = json.loads(bad_args.stdout)["error"]
    assert error["type"] == "ToolInputError"
    assert {problem["field"] for problem in error["errors"]} == {"value", "from_unit", "to_unit"}
    not_json = run("tools", "call", "unit_convert", "{value")
    assert not_json.exit_code == 1
    assert "not valid JSON" in not_json.stderr
    unknown = run("tools", "call", "teleporter", "{}")
    assert unknown.exit_code == 1
    assert "unknown tool 'teleporter'" in unknown.stderr


def test_check_passes_on_the_repository_and_fails_on_a_mismatch(tmp_path, monkeypatch):
    assert run("tools", "check").exit_code == 0
    wrong = ToolEntry(name="unit_convert", capability="teleport", capability_fqn="tools.unit_convert.UnitConvert")
    save_registry({"unit_convert": wrong}, registry_path(tmp_path))
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    result = run("tools", "check")
    assert result.exit_code == 1
    assert "'teleport' is not in" in result.stderr


def test_docs_writes_the_reference(tmp_path):
    target = tmp_path / "tools.md"
    assert run("tools", "docs", "--output", str(target)).exit_code == 0
    assert "## unit_convert" in target.read_text()
