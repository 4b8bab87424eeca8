"""The pruning daemon: stale, low-usage and duplicate modules, confidence >= 0.5, sorted."""

from __future__ import annotations

from colony.kernel import ColonyKernel
from colony.kernel.pruning import PruningDaemon, RegistryEntry
from tests.colony.kernel.conftest import FakeClock

DAY = 86400.0
REPORT = {"action_type": "import_module", "actual_outcome": "used", "tests_passed": True}


def test_rules_and_ordering() -> None:
    now = 100 * DAY
    registry = [
        RegistryEntry("pkg.fresh", now - 60, 5, 3.0),
        RegistryEntry("pkg.stale", now - 10 * DAY, 4, 2.0),
        RegistryEntry("pkg.very_stale", now - 30 * DAY, 4, 2.0),
        RegistryEntry("pkg.faded", now - DAY, 1, 0.1),
        RegistryEntry("pkg.parser", now - 60, 9, 5.0),
        RegistryEntry("pkg.parser_old", now - 60, 3, 2.0),
        RegistryEntry("pkg.barely", now - 60, 1, 0.49),
    ]
    candidates = PruningDaemon().scan(registry, now)
    by_path = {c.module_path: c for c in candidates}
    assert set(by_path) == {"pkg.very_stale", "pkg.faded", "pkg.parser_old", "pkg.stale", "pkg.barely"}
    assert by_path["pkg.very_stale"].confidence == 0.95
    assert by_path["pkg.stale"].confidence == round(0.5 + 0.45 * 3 / 7, 4)
    assert by_path["pkg.faded"].reason.startswith("low usage")
    assert by_path["pkg.parser_old"].duplicate_of == "pkg.parser"
    assert all(c.confidence >= 0.5 for c in candidates)
    assert [c.confidence for c in candidates] == sorted((c.confidence for c in candidates), reverse=True)


def test_a_path_built_to_backtrack_is_read_in_linear_time() -> None:
    # On Python's re, the copy-suffix check of 300,000 digits and a letter backtracked for minutes.
    now = 100 * DAY
    registry = [
        RegistryEntry("7" * 300_000 + "x", now - 60, 9, 5.0),
        RegistryEntry("pkg.parser", now - 60, 9, 5.0),
        RegistryEntry("pkg.parser7", now - 60, 3, 2.0),
    ]
    [candidate] = PruningDaemon().scan(registry, now)
    assert (candidate.module_path, candidate.duplicate_of) == ("pkg.parser7", "pkg.parser")


def test_kernel_report_from_dependency_traces(kernel: ColonyKernel, clock: FakeClock) -> None:
    for target in ("pkg.parser", "pkg.parser_v2", "pkg.used"):
        kernel.record_outcome({**REPORT, "agent_id": "a", "target": target})
    assert kernel.pruning_report().total_candidates == 1  # only the copy, while everything is fresh
    clock.advance(8 * DAY)
    kernel.record_outcome({**REPORT, "agent_id": "a", "target": "pkg.used"})
    report = kernel.pruning_report()
    assert [c.module_path for c in report.candidates] == ["pkg.parser_v2", "pkg.parser"]
    assert report.candidates[0].duplicate_of == "pkg.parser"
    assert "stale" in report.candidates[1].reason
    assert kernel.status().pruning_candidates_count == 2
