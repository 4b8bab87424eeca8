"""The fdtd_sweep tool: a 1-D FDTD parameter sweep that runs as an AWS Batch job."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from colony import ToolInputError, ToolSpec, action_executor
from colony.errors import ToolOutputError
from colony.hpc import HPCToolCapability, InputArtifact
from colony.spec import Backend, CostModel, ExecutionLocality, Licensing, ResourceRequirements
from tools.fdtd_sweep.job import DECK, RESULTS
from tools.fdtd_sweep.simulation import validate_deck

OUTPUTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cells": {"type": "integer", "description": "Length of the 1-D grid in cells."},
        "steps": {"type": "integer", "description": "Time steps per simulation."},
        "slab_cells": {"type": "integer", "description": "Slab thickness in cells."},
        "points": {
            "type": "array",
            "description": "One entry per permittivity, in the order asked.",
            "items": {
                "type": "object",
                "properties": {
                    "relative_permittivity": {"type": "number", "description": "The slab's permittivity."},
                    "reflectance": {"type": "number", "description": "Reflected fraction of the pulse energy."},
                    "transmittance": {"type": "number", "description": "Transmitted fraction of the pulse energy."},
                },
                "required": ["relative_permittivity", "reflectance", "transmittance"],
            },
        },
    },
    "required": ["cells", "steps", "slab_cells", "points"],
}


class SweepPoint(TypedDict):
    """The slab's response at one permittivity."""

    relative_permittivity: float
    reflectance: float
    transmittance: float


class SweepResult(TypedDict):
    """Every point of the sweep, with the grid it ran on."""

    cells: int
    steps: int
    slab_cells: int
    points: list[SweepPoint]


class FdtdSweep(HPCToolCapability):
    """Sweep a dielectric slab's permittivity with a 1-D FDTD simulation on AWS Batch."""

    spec = ToolSpec(
        name="fdtd_sweep",
        version="1.1.2",
        description=(
            "Reflectance and transmittance of a lossless dielectric slab for a Gaussian pulse, "
            "one 1-D FDTD simulation per relative permittivity, run as an AWS Batch job."
        ),
        domain="em",
        capabilities=("run_fdtd_sweep",),
        outputs_schema=OUTPUTS_SCHEMA,
        backend=Backend.HTTP_API,
        execution_locality=ExecutionLocality.HPC,
        cost_model=CostModel(cpu_seconds=10.0),
        resource_requirements=ResourceRequirements(min_vcpus=1, min_memory_gb=1.0, expected_wallclock_seconds=300),
        licensing=Licensing.MIT,
        policy_tags=("deterministic", "hpc"),
    )

    def _domain_tags(self) -> frozenset[str]:
        return frozenset({"em", "fdtd"})

    @action_executor
    async def run_fdtd_sweep(
        self,
        *,
        relative_permittivities: Annotated[list[float], Field(min_length=1, max_length=32)],
        slab_cells: Annotated[int, Field(ge=1, le=2500)] = 40,
        cells: Annotated[int, Field(ge=100, le=5000)] = 300,
        steps: Annotated[int, Field(ge=100, le=20000)] = 3000,
    ) -> SweepResult:
        """Simulate a pulse hitting a dielectric slab, once per permittivity, on AWS Batch.

        Args:
            relative_permittivities: The slab's relative permittivity at each sweep point, 1 to 100 (1 to 32 points).
            slab_cells: Slab thickness in grid cells; at most a third of ``cells``.
            cells: Length of the 1-D grid in cells.
            steps: Time steps per simulation; too few leaves energy inside the slab.

        Returns:
            {"cells", "steps", "slab_cells", "points": [{"relative_permittivity", "reflectance",
            "transmittance"}]}; reflectance + transmittance is 1 when ``steps`` suffices. Limits
            beyond the operator's caps, a failed job (with its log tail) or a timeout are errors.
        """
        deck = {
            "relative_permittivities": relative_permittivities,
            "slab_cells": slab_cells,
            "cells": cells,
            "steps": steps,
        }
        problems = validate_deck(deck)
        if problems:
            field, _, message = problems[0].partition(": ")
            raise ToolInputError.for_field(field, message)
        result: SweepResult = await self._submit_hpc_job(deck)
        return result

    def _build_input_artifacts(self, call_args: Mapping[str, Any], workdir: Path) -> list[InputArtifact]:
        path = workdir / DECK
        path.write_text(json.dumps(dict(call_args), sort_keys=True))
        return [InputArtifact(key=DECK, path=path, content_type="application/json")]

    def _parse_output_artifacts(self, artifacts: Mapping[str, Path]) -> SweepResult:
        if RESULTS not in artifacts:
            raise ToolOutputError(f"the job wrote no {RESULTS} (outputs: {', '.join(sorted(artifacts)) or 'none'})")
        result: SweepResult = json.loads(artifacts[RESULTS].read_text())
        return result
