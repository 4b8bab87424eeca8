"""A one-dimensional FDTD simulation: a Gaussian pulse meets a dielectric slab.

Normalised Yee scheme (Courant number 1/2) with Mur-style first-order absorbing
ends. Each sweep point runs twice, once in free space as the reference, so the
reflected and transmitted pulse energies are fractions of the incident one:
for a lossless slab they sum to one, which the tests check.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["simulate_sweep", "validate_deck"]

LIMITS = {"cells": (100, 5000), "steps": (100, 20000), "slab_cells": (1, 2500), "points": (1, 32)}


def validate_deck(deck: dict[str, Any]) -> list[str]:
    """What is wrong with a deck, one message per problem (empty when it can run)."""
    problems = []
    for field in ("cells", "steps", "slab_cells"):
        value = deck.get(field)
        low, high = LIMITS[field]
        if not isinstance(value, int) or not low <= value <= high:
            problems.append(f"{field}: must be an integer from {low} to {high}, got {value!r}")
    permittivities = deck.get("relative_permittivities")
    low, high = LIMITS["points"]
    if not isinstance(permittivities, list) or not low <= len(permittivities) <= high:
        problems.append(f"relative_permittivities: must list {low} to {high} values")
    elif any(not isinstance(eps, int | float) or not 1.0 <= eps <= 100.0 for eps in permittivities):
        problems.append("relative_permittivities: each must be a number from 1 to 100")
    cells, slab = deck.get("cells"), deck.get("slab_cells")
    if isinstance(cells, int) and isinstance(slab, int) and slab > cells // 3:
        problems.append(f"slab_cells: must be at most a third of cells ({cells // 3}), got {slab}")
    return problems


def _run(cells: int, steps: int, slab: tuple[int, int], eps: float) -> tuple[float, list[float]]:
    """Energy (E squared summed over time) right of the slab, and the field's trace left of the source."""
    ex = [0.0] * cells
    hy = [0.0] * cells
    cb = [0.5 / eps if slab[0] <= k < slab[1] else 0.5 for k in range(cells)]
    source, left_probe, right_probe = cells // 4, cells // 8, slab[1] + (cells - slab[1]) // 2
    spread, delay = 12.0, 40.0
    low1 = low2 = high1 = high2 = 0.0
    right = 0.0
    left_trace = []
    for step in range(steps):
        for k in range(1, cells):
            ex[k] += cb[k] * (hy[k - 1] - hy[k])
        ex[source] += math.exp(-0.5 * ((delay - step) / spread) ** 2)
        ex[0], low2, low1 = low2, low1, ex[1]
        ex[cells - 1], high2, high1 = high2, high1, ex[cells - 2]
        for k in range(cells - 1):
            hy[k] += 0.5 * (ex[k] - ex[k + 1])
        left_trace.append(ex[left_probe])
        right += ex[right_probe] ** 2
    return right, left_trace


def simulate_sweep(deck: dict[str, Any]) -> dict[str, Any]:
    """Reflectance and transmittance of the slab for each permittivity in the deck."""
    cells, steps, slab_cells = deck["cells"], deck["steps"], deck["slab_cells"]
    slab = (cells // 2, cells // 2 + slab_cells)
    incident, reference_trace = _run(cells, steps, slab, 1.0)
    points = []
    for eps in deck["relative_permittivities"]:
        transmitted, trace = _run(cells, steps, slab, float(eps))
        reflected = sum((value - ref) ** 2 for value, ref in zip(trace, reference_trace, strict=True))
        points.append(
            {
                "relative_permittivity": float(eps),
                "reflectance": round(reflected / incident, 6),
                "transmittance": round(transmitted / incident, 6),
            }
        )
    return {"cells": cells, "steps": steps, "slab_cells": slab_cells, "points": points}
