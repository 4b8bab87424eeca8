"""Definition pins: a served definition that changes without a version bump is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from colony.catalog import ToolEntry, load_registry, save_registry
from colony.cli import app
from colony.surfaces.contract import breaking_changes, contract_of
from colony.surfaces.definitions import definition_hash, served_definition
from colony.surfaces.pinning import PIN_KEY, PinState, check_pins, pin_entries, semver_key
from tests.colony.surfaces.sample_tools import (
    AppendNote,
    AppendNoteBumped,
    AppendNoteRenamed,
    AppendNoteRenamedMajor,
    AppendNoteReworded,
)
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
    assert pin == {
        "version": "1.0.0",
        "sha256": served_definition(AppendNote).sha256,
        "contract": contract_of(served_definition(AppendNote)),
    }
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


def test_a_change_that_breaks_callers_needs_a_major_version() -> None:
    pin = pin_entries({"append_note": entry("AppendNote")})["append_note"].extra
    (minor,) = check_pins({"append_note": entry("AppendNoteRenamed").model_copy(update={"extra": pin})})
    assert minor.state is PinState.BREAKING_WITHOUT_MAJOR and minor.state.is_error
    assert "input 'note' was removed" in minor.message and "input 'line' is now required" in minor.message
    assert "release it as 2.0.0" in minor.message
    (major,) = check_pins({"append_note": entry("AppendNoteRenamedMajor").model_copy(update={"extra": pin})})
    assert major.state is PinState.REPIN_NEEDED
    assert AppendNoteRenamed.spec.version == "1.1.0" and AppendNoteRenamedMajor.spec.version == "2.0.0"


def test_only_what_callers_depend_on_is_breaking() -> None:
    before = contract_of(served_definition(AppendNote))
    assert breaking_changes(before, contract_of(served_definition(AppendNoteReworded))) == []  # words only
    wider = {**before, "inputs": {**before["inputs"], "tag": "x"}, "outputs": [*before["outputs"], "extra"]}
    assert breaking_changes(before, wider) == []  # a new optional input, a new output
    assert breaking_changes(before, {**before, "outputs": []}) == [
        f"output {name!r} was removed" for name in before["outputs"]
    ]
    assert breaking_changes(before, {**before, "inputs": {**before["inputs"], "note": "changed"}}) == [
        "input 'note' changed its type or constraints"
    ]


def test_a_version_zero_tool_may_break_on_a_minor_bump() -> None:
    from colony.surfaces.pinning import _major_bump

    assert _major_bump(semver_key("0.3.0"), semver_key("0.2.5")) and not _major_bump(
        semver_key("0.2.6"), semver_key("0.2.5")
    )
    assert _major_bump(semver_key("2.0.0"), semver_key("1.9.0")) and not _major_bump(
        semver_key("1.10.0"), semver_key("1.9.0")
    )


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


class AppendNoteV25(AppendNote):
    """The original definition, released as 2.5.0."""

    spec = AppendNote.spec.model_copy(update={"version": "2.5.0"})


class AppendNoteV1_9(AppendNote):
    spec = AppendNote.spec.model_copy(update={"version": "1.9.0"})


class AppendNoteV1_10Reworded(AppendNoteReworded):
    spec = AppendNoteReworded.spec.model_copy(update={"version": "1.10.0"})


class AppendNoteRc(AppendNoteReworded):
    spec = AppendNoteReworded.spec.model_copy(update={"version": "1.0.1-rc.1"})


def test_semantic_version_precedence() -> None:
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.9.0",
        "1.10.0",
        "2.0.0",
    ]
    assert sorted(reversed(ordered), key=semver_key) == ordered
    assert semver_key("1.0.0+build.7") == semver_key("1.0.0")
    with pytest.raises(ValueError, match="'v1' is not a semantic version"):
        semver_key("v1")


def entry_here(cls_name: str) -> ToolEntry:
    return ToolEntry(name="append_note", capability="append_note", capability_fqn=f"{__name__}.{cls_name}")


def test_cli_check_fails_on_a_downgrade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2.5.0 pinned, then 1.0.0 with a new definition: an error, not a new pin."""
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    registry = tmp_path / ".colony" / "tool-registry.json"
    save_registry({"append_note": entry_here("AppendNoteV25")}, registry)
    runner = CliRunner()
    assert runner.invoke(app, ["tools", "pin"]).exit_code == 0
    document = json.loads(registry.read_text())
    document["tools"][0]["capability_fqn"] = f"{MODULE}.AppendNoteReworded"
    registry.write_text(json.dumps(document))
    result = runner.invoke(app, ["tools", "check"])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "version went down from the pinned 2.5.0 to 1.0.0" in text
    assert "release it as a version above 2.5.0" in text
    assert (status := check_pins(load_registry(registry))[0]).state is PinState.DOWNGRADED, status


@pytest.mark.parametrize(
    ("pinned", "now", "exit_code", "said"),
    [
        ("AppendNoteV1_9", "AppendNoteV1_10Reworded", 0, "v1.9.0 -> v1.10.0 with a new definition"),
        ("AppendNoteV1_10Reworded", "AppendNoteV1_9", 1, "version went down from the pinned 1.10.0 to 1.9.0"),
        ("AppendNote", "AppendNoteRc", 0, "v1.0.0 -> v1.0.1-rc.1 with a new definition"),
    ],
)
def test_cli_check_compares_versions_by_precedence_not_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pinned: str, now: str, exit_code: int, said: str
) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    registry = tmp_path / ".colony" / "tool-registry.json"
    save_registry({"append_note": entry_here(pinned)}, registry)
    runner = CliRunner()
    assert runner.invoke(app, ["tools", "pin"]).exit_code == 0
    document = json.loads(registry.read_text())
    document["tools"][0]["capability_fqn"] = f"{__name__}.{now}"
    registry.write_text(json.dumps(document))
    result = runner.invoke(app, ["tools", "check"])
    assert result.exit_code == exit_code, result.output
    assert said in " ".join(result.output.split())


def test_cli_check_fails_on_a_pin_whose_version_is_not_semver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_REPO_ROOT", str(tmp_path))
    registry = tmp_path / ".colony" / "tool-registry.json"
    save_registry({"append_note": entry("AppendNote")}, registry)
    runner = CliRunner()
    assert runner.invoke(app, ["tools", "pin"]).exit_code == 0
    document = json.loads(registry.read_text())
    document["tools"][0]["extra"][PIN_KEY]["version"] = "latest"
    registry.write_text(json.dumps(document))
    result = runner.invoke(app, ["tools", "check"])
    assert result.exit_code == 1
    assert "its pin's version is unusable: 'latest' is not a semantic version" in " ".join(result.output.split())
