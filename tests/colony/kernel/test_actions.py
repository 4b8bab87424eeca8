"""The action table: destructive words anywhere in a name, known read-only names, unknown names are writes."""

from __future__ import annotations

import pytest

from colony.kernel import ColonyKernel, Decision
from colony.kernel.actions import ActionKind, classify_action, resolve_kind, segments
from tests.colony.kernel.conftest import good_plan

READ_ONLY, MUTATING, DESTRUCTIVE = ActionKind.READ_ONLY, ActionKind.MUTATING, ActionKind.DESTRUCTIVE


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        # seed 001's examples
        ("patch_file", MUTATING), ("archive_module", DESTRUCTIVE), ("run_tests", READ_ONLY),
        ("exec_code", MUTATING), ("merge_pr", MUTATING), ("delete", DESTRUCTIVE),
        # a destructive word anywhere, as a segment split on _ - . space and camelCase
        ("query_and_drop_table", DESTRUCTIVE), ("queryAndDropTable", DESTRUCTIVE), ("read.then.rm", DESTRUCTIVE),
        ("list files-then-truncate", DESTRUCTIVE), ("safe_overwrite_config", DESTRUCTIVE),
        ("get_and_delete_user", DESTRUCTIVE), ("git_force_push", DESTRUCTIVE), ("reset_hard", DESTRUCTIVE),
        # known read-only names
        ("read_file", READ_ONLY), ("list_jobs", READ_ONLY), ("Query", READ_ONLY), ("RunTests", READ_ONLY),
        ("run-linter", READ_ONLY), ("get_status", READ_ONLY),
        # a read-only verb with a write word is a write; unknown names are writes
        ("get_and_set_flag", MUTATING), ("read_and_write", MUTATING), ("query_then_update", MUTATING),
        ("run_tests_and_push", MUTATING), ("getaway_car", MUTATING), ("convert", MUTATING), ("", MUTATING),
        # a word that merely contains a destructive one is not it
        ("format_report", MUTATING), ("drops_count_view", MUTATING), ("review_droplets", READ_ONLY),
    ],
)  # fmt: skip
def test_the_table(name: str, kind: ActionKind) -> None:
    assert classify_action(name) is kind


def test_segments_split_on_separators_and_camel_case() -> None:
    assert segments("queryAndDrop-table.now please") == ("query", "and", "drop", "table", "now", "please")
    assert segments("HTTPGetStatus") == ("http", "get", "status")


@pytest.mark.parametrize("name", ["read_file", "patch_file", "drop_table"])
def test_side_effecting_false_never_lowers(name: str) -> None:
    assert resolve_kind(name, side_effecting=False) is classify_action(name)


def test_side_effecting_true_raises_a_read_only_name_only() -> None:
    assert resolve_kind("read_file", side_effecting=True) is MUTATING
    assert resolve_kind("drop_table", side_effecting=True) is DESTRUCTIVE


@pytest.mark.parametrize(
    ("name", "declared", "kind"),
    [
        ("read_file", DESTRUCTIVE, DESTRUCTIVE), ("read_file", MUTATING, MUTATING),
        ("patch_file", DESTRUCTIVE, DESTRUCTIVE), ("drop_table", READ_ONLY, DESTRUCTIVE),
        ("patch_file", READ_ONLY, MUTATING), ("read_file", READ_ONLY, READ_ONLY),
    ],
)  # fmt: skip
def test_a_declared_kind_only_raises(name: str, declared: ActionKind, kind: ActionKind) -> None:
    assert resolve_kind(name, declared=declared) is kind


def test_the_gate_judges_the_raised_kind(kernel: ColonyKernel) -> None:
    # a sandbox agent passes a read-only gate ...
    assert kernel.propose_action(good_plan(action_type="read_file")).decision is Decision.EXECUTE
    # ... but not once the caller (or the catalog spec) says the action writes
    for extra in ({"side_effecting": True}, {"kind": "mutating"}, {"kind": ActionKind.DESTRUCTIVE}):
        verdict = kernel.propose_action(good_plan(action_type="read_file", **extra))
        assert verdict.reason == "SANDBOX role: no write-path gate passes", extra


def test_a_declared_destructive_kind_brings_the_destructive_rules(kernel: ColonyKernel) -> None:
    kernel.set_trust("engineer-1", 0.9)
    assert kernel.propose_action(good_plan()).decision is Decision.EXECUTE
    held = kernel.propose_action(good_plan(kind="destructive"))
    assert held.decision is Decision.HOLD
    assert held.required_evidence == ["resolve_scope_creep"]
