"""Definition pins: a served definition that changes without a version bump is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from colony.catalog import ToolEntry, load_registry, save_registry
from colony.cli import app
from colony.surfaces.definitions import definition_hash, served_definition
from colony.surfaces.pinning import PIN_KEY, PinState, check_pins, pin_entries
from tests.colony.surfaces.sample_tools import AppendNote, AppendNoteBumped, AppendNoteReworded
from tools.unit_convert import UnitConvert

MODULE = "tests.colony.surfaces.sample_tools"


def entry(cls_name: str) -> ToolEntry:
    return ToolEntry(name="append_note", capability="append_note", capability_fqn=f"{MODULE}.{cls_name}")


def test_the_hash_covers_what_an_agent_reads() -> None:
    original = served_definition(AppendNote)
    assert original.sha256 == served_definition(AppendNote).sha256 == definition_hash(original)
    assert served_definition(AppendNoteReworded).sha256 != original.sha256
    assert served_definition(UnitConvert).sha256 != original.sha256
    assert "Append one line of text" in original.description


def test_pin_then_check() -> None:
    pinned = pin_entries({"append_note": entry("AppendNote")})
    pin = pinned["append_note"].extra[PIN_KEY]
    assert pin == {"version": "1.0.0", "sha256": served_definition(AppendNote).sha256}
    assert [status.state for status in check_pins(pinned)] == [PinState.PINNED]


def test_a_silent_change_is_reported_and_a_bump_asks_for_a_new_pin() -> None:
    pin = pin_entries({"append_note": entry("AppendNote")})["append_note"].extra
    silent = entry("AppendNoteReworded").model_copy(update={"extra": pin})
    (status,) = check_pins({"append_note": silent})
    assert status.state is PinState.CHANGED_WITHOUT_BUMP
    assert "still 1.0.0" in status.message and "bump spec.version" in status.message
    bumped = entry("AppendNoteBumped").model_copy(update={"extra": pin})
    (status,) = check_pins({"append_note": bumped})
    assert status.state is PinState.REPIN_NEEDED and "v1.0.0 -> v1.1.0" in status.message
    assert check_pins({"append_note": entry("AppendNote")})[0].state is PinState.UNPINNED
    assert AppendNoteBumped.spec.version == "1.1.0"


def test_the_repository_catalog_is_pinned() -> None:
    statuses = check_pins(load_registry())
    assert statuses and all(status.state is PinState.PINNED for status in statuses), [s.message for s in statuses]


def test_cli_pin_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[3]))
    registry = tmp_path / ".colony" / "tool-registry.json"
    save_registry({"append_note": entry("AppendNote")}, registry)
    runner = CliRunner()
    unpinned = runner.invoke(app, ["tools", "check"])
    assert unpinned.exit_code == 0 and "not pinned" in unpinned.output
    pinned = runner.invoke(app, ["tools", "pin"])
    assert pinned.exit_code == 0 and served_definition(AppendNote).sha256 in pinned.output
    assert runner.invoke(app, ["tools", "check"]).exit_code == 0

    document = json.loads(registry.read_text())
    document["tools"][0]["capability_fqn"] = f"{MODULE}.AppendNoteReworded"
    registry.write_text(json.dumps(document))
    changed = runner.invoke(app, ["tools", "check"])
    assert changed.exit_code == 1 and "its version is still 1.0.0" in " ".join(changed.output.split())
