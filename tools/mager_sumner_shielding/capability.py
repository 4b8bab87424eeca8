"""The mager_sumner_shielding tool (seed 000's in-process sample tool).

Static (DC) transverse shielding factor of long concentric cylindrical shells:
each shell's exact single-shell factor, combined shell by shell with the
Mager / Sumner multi-shell approximation. See README.md for the formula.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolInputError, ToolSpec, action_executor
from colony.spec import CostModel, HeadlessReadiness, HITLFrequency, Licensing, ResourceRequirements

MAX_LAYERS = 16

_LAYER_LIST: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": MAX_LAYERS}
INPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "layers_mm": {
            **_LAYER_LIST,
            "items": {"type": "number", "exclusiveMinimum": 0},
            "description": "Thickness of each shell in mm, innermost first",
        },
        "relative_permeability": {
            **_LAYER_LIST,
            "items": {"type": "number", "minimum": 1},
            "description": "Relative permeability of each shell, same order and length as layers_mm",
        },
        "inner_radius_mm": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Inner radius of the innermost shell in mm",
        },
        "gaps_mm": {
            "type": ["array", "null"],
            "items": {"type": "number", "minimum": 0},
            "default": None,
            "description": "Radial air gap between consecutive shells in mm (one fewer than layers); "
            "null means the shells touch",
        },
    },
    "required": ["layers_mm", "relative_permeability", "inner_radius_mm"],
    "additionalProperties": False,
}
OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "shielding_factor": {"type": "number", "description": "B outside / B inside, >= 1"},
        "shielding_db": {"type": "number", "description": "20 log10(shielding_factor)"},
        "outer_radius_mm": {"type": "number", "description": "Outer radius of the outermost shell in mm"},
    },
    "required": ["shielding_factor", "shielding_db", "outer_radius_mm"],
}


class Shielding(TypedDict):
    """The shield's static transverse shielding factor and its size."""

    shielding_factor: float
    shielding_db: float
    outer_radius_mm: float


def single_shell_gain(permeability: float, inner_radius: float, outer_radius: float) -> float:
    """S - 1 for one long cylindrical shell in a uniform transverse field (exact, linear material)."""
    return (permeability - 1.0) ** 2 / (4.0 * permeability) * (1.0 - (inner_radius / outer_radius) ** 2)


def shielding_factor(
    thicknesses: list[float], permeabilities: list[float], inner_radius: float, gaps: list[float]
) -> tuple[float, float]:
    """The combined factor and the outer radius; shells innermost first, ``gaps`` between them."""
    radius = inner_radius
    total_gain = 0.0
    inner_stack_outer_radius = 0.0
    for index, (thickness, permeability) in enumerate(zip(thicknesses, permeabilities, strict=True)):
        if index:
            radius += gaps[index - 1]
        gain = single_shell_gain(permeability, radius, radius + thickness)
        if index == 0:
            total_gain = gain
        else:
            # Sumner et al. (1987): S = 1 + s_in + s + s_in * s * (1 - (R_in / R_out)^2), with the
            # radii bounding the gap, so touching shells add like one thicker shell.
            coupling = 1.0 - (inner_stack_outer_radius / radius) ** 2
            total_gain = total_gain + gain + total_gain * gain * coupling
        radius += thickness
        inner_stack_outer_radius = radius
    return 1.0 + total_gain, radius


class MagerSumnerShieldingCapability(LocalToolCapability):
    """Static magnetic shielding factor of concentric cylindrical shells (Mager / Sumner)."""

    spec = ToolSpec(
        name="mager_sumner_shielding",
        version="1.0.1",
        description="Static (DC) transverse magnetic shielding factor of long concentric cylindrical "
        "shells of high-permeability material, by the Mager / Sumner multi-shell approximation.",
        domain="em",
        capabilities=("compute_shielding_factor",),
        inputs_schema=INPUTS_SCHEMA,
        outputs_schema=OUTPUTS_SCHEMA,
        cost_model=CostModel(cpu_seconds=0.1),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=0.5),
        headless=HeadlessReadiness.NATIVE,
        hitl_frequency=HITLFrequency.AUTONOMOUS,
        licensing=Licensing.MIT,
        policy_tags=("pure", "deterministic", "no_network"),
        references=(
            "A. J. Mager, 'Magnetic shields', IEEE Trans. Magn. 6(1), 67-75 (1970)",
            "T. J. Sumner, J. M. Pendlebury, K. F. Smith, 'Conventional magnetic shielding', "
            "J. Phys. D: Appl. Phys. 20, 1095-1101 (1987)",
        ),
    )

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"em", "magnetic_shielding"})

    @action_executor
    def compute_shielding_factor(
        self,
        *,
        layers_mm: Annotated[
            list[Annotated[float, Field(gt=0, allow_inf_nan=False)]],
            Field(min_length=1, max_length=MAX_LAYERS, description="Thickness of each shell in mm, innermost first"),
        ],
        relative_permeability: Annotated[
            list[Annotated[float, Field(ge=1, allow_inf_nan=False)]],
            Field(
                min_length=1,
                max_length=MAX_LAYERS,
                description="Relative permeability of each shell, same order and length as layers_mm",
            ),
        ],
        inner_radius_mm: Annotated[
            float, Field(gt=0, allow_inf_nan=False, description="Inner radius of the innermost shell in mm")
        ],
        gaps_mm: Annotated[
            list[Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None,
            Field(description="Radial air gap between consecutive shells in mm; null means the shells touch"),
        ] = None,
    ) -> Shielding:
        """Estimate how strongly nested cylindrical shells attenuate a static transverse magnetic field.

        Each shell's exact single-shell factor is combined outwards with Sumner's
        multi-shell approximation; the model is a long cylinder, linear material
        (no saturation), DC field across the axis. For spheres, ends or AC fields
        it is only indicative.

        Args:
            layers_mm: Thickness of each shell in mm, innermost first (1 to 16 shells, each > 0).
            relative_permeability: Relative permeability of each shell (>= 1), same length as layers_mm.
            inner_radius_mm: Inner radius of the innermost shell in mm (> 0).
            gaps_mm: Radial air gap between consecutive shells in mm (>= 0), one fewer than the
                shells; omitted or null means each shell sits directly on the previous one.

        Returns:
            {"shielding_factor": B outside / B inside (>= 1), "shielding_db": 20 log10 of it,
            "outer_radius_mm": radius of the outside of the outermost shell}. Lists of
            different lengths, a thickness <= 0, a permeability < 1 or a wrong number
            of gaps are input errors naming the field.
        """
        if len(relative_permeability) != len(layers_mm):
            raise ToolInputError.for_field(
                "relative_permeability",
                f"relative_permeability has {len(relative_permeability)} values for {len(layers_mm)} layers",
                expected=f"{len(layers_mm)} values, one per layer",
            )
        gaps = [0.0] * (len(layers_mm) - 1) if gaps_mm is None else gaps_mm
        if len(gaps) != len(layers_mm) - 1:
            raise ToolInputError.for_field(
                "gaps_mm",
                f"gaps_mm has {len(gaps)} values for {len(layers_mm)} layers",
                expected=f"{len(layers_mm) - 1} values, one between each pair of layers",
            )
        factor, outer_radius = shielding_factor(layers_mm, relative_permeability, inner_radius_mm, gaps)
        if not math.isfinite(factor):
            raise ToolInputError.for_field("relative_permeability", "the shielding factor overflows a float")
        return Shielding(shielding_factor=factor, shielding_db=20.0 * math.log10(factor), outer_radius_mm=outer_radius)
