"""One error table for the CLI: a ColonyError from any command is rendered once, with its exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from colony.cli import app
from colony.cli.failures import EXIT_CODES, ColonyTyper, JsonFlag, exit_code
from colony.errors import ColonyError, KernelInputError, RegistryFileError, ToolInputError

runner = CliRunner()


def test_every_colony_error_has_an_exit_code() -> None:
    assert EXIT_CODES[ColonyError] == 1
    for error in (ColonyError("x"), ToolInputError("x"), KernelInputError("x"), RegistryFileError("x")):
        assert exit_code(error) == 1


def test_a_command_s_error_is_rendered_once_as_text_or_as_json() -> None:
    demo = ColonyTyper()

    @demo.command()
    def fails(as_json: JsonFlag = False) -> None:
        raise ToolInputError.for_field("value", "value must be a number", expected="number")

    @demo.command()
    def other() -> None:  # a second command, so the app keeps its subcommands
        raise ColonyError("other")

    text = runner.invoke(demo, ["fails"])
    assert text.exit_code == 1 and text.stdout == ""
    assert text.stderr.strip() == "error: value must be a number"
    as_json = runner.invoke(demo, ["fails", "--json"])
    assert as_json.exit_code == 1
    error = json.loads(as_json.stdout)["error"]
    assert json.loads(as_json.stdout)["ok"] is False and error["type"] == "ToolInputError"
    assert error["errors"][0]["field"] == "value"


@pytest.mark.parametrize("command", [["tools", "list", "--json"], ["agent", "show", "{spec}", "--json"]])
def test_with_json_every_command_fails_in_json(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry file is broken: the tools and agent commands answer the same way, as JSON on stdout."""
    (tmp_path / ".colony").mkdir()
    (tmp_path / ".colony" / "tool-registry.json").write_text("{not json")
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    spec = tmp_path / "agent.yaml"
    spec.write_text("name: clerk\ncapabilities: [unit_convert]\n")
    result = runner.invoke(app, [part.format(spec=spec) for part in command])
    assert result.exit_code == 1, result.output
    answer = json.loads(result.stdout)
    assert answer["ok"] is False and answer["error"]["message"]
