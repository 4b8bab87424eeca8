"""The 1-D FDTD sweep itself: physics that must hold, and decks it refuses."""

from __future__ import annotations

import pytest

from tools.fdtd_sweep.simulation import simulate_sweep, validate_deck

DECK = {"cells": 200, "steps": 2000, "slab_cells": 30, "relative_permittivities": [1.0, 2.25, 6.0]}


@pytest.fixture(scope="module")
def sweep() -> dict:
    return simulate_sweep(DECK)


def test_free_space_reflects_nothing(sweep: dict) -> None:
    free = sweep["points"][0]
    assert free == {"relative_permittivity": 1.0, "reflectance": 0.0, "transmittance": 1.0}


def test_a_lossless_slab_conserves_energy(sweep: dict) -> None:
    for point in sweep["points"]:
        assert point["reflectance"] + point["transmittance"] == pytest.approx(1.0, abs=1e-3)


def test_a_denser_slab_reflects_more(sweep: dict) -> None:
    reflectances = [point["reflectance"] for point in sweep["points"]]
    assert reflectances == sorted(reflectances) and reflectances[-1] > 0.1


def test_the_result_echoes_the_grid(sweep: dict) -> None:
    assert (sweep["cells"], sweep["steps"], sweep["slab_cells"]) == (200, 2000, 30)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"cells": 50}, "cells: must be an integer from 100 to 5000"),
        ({"steps": "many"}, "steps: must be an integer"),
        ({"relative_permittivities": []}, "relative_permittivities: must list 1 to 32"),
        ({"relative_permittivities": [0.5]}, "relative_permittivities: each must be a number from 1 to 100"),
        ({"slab_cells": 90}, "slab_cells: must be at most a third of cells (66)"),
    ],
)
def test_bad_decks_are_named(change: dict, named: str) -> None:
    problems = validate_deck({**DECK, **change})
    assert any(named in problem for problem in problems), problems
