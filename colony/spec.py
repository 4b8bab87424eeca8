"""ToolSpec: the frozen description of a tool.

Planners, operators and the catalog read it without running the tool.

It carries the capability framework's metadata (determinism, cost, resources,
licence, human-in-the-loop tier, locality) and the tool catalog's identity
(``tool_id``, semantic version, policy tags, required capability tokens).
A bad spec fails when it is constructed, with pydantic naming the field.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from colony.schemas import validator_class

__all__ = [
    "Backend",
    "CostModel",
    "Determinism",
    "ExecutionLocality",
    "GpuRequirement",
    "HITLFrequency",
    "HeadlessReadiness",
    "Interruptibility",
    "Licensing",
    "ResourceRequirements",
    "SecretRequirement",
    "SpecModel",
    "ToolSpec",
]

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_NAME = r"^[a-z][a-z0-9_]*$"


class SpecModel(BaseModel):
    """Base for every spec value: immutable, and strict about unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)


class Determinism(StrEnum):
    """Whether the same inputs give the same outputs (drives caching and retries)."""

    DETERMINISTIC = "deterministic"
    SEEDED = "seeded"
    NONDETERMINISTIC = "nondeterministic"


class ExecutionLocality(StrEnum):
    """Where the tool's work runs."""

    LOCAL = "local"
    HPC = "hpc"
    CUSTOMER_SITE = "customer_site"


class HeadlessReadiness(StrEnum):
    """How well the tool runs without a person at a screen."""

    NATIVE = "native"
    WRAPPED = "wrapped"
    PARTIAL = "partial"
    GUI_ONLY = "gui_only"


class HITLFrequency(StrEnum):
    """How often a person must be in the loop."""

    AUTONOMOUS = "autonomous"
    ON_EXCEPTION = "on_exception"
    PER_RUN = "per_run"
    CONTINUOUS = "continuous"


class Licensing(StrEnum):
    """The licence the tool's implementation is under."""

    MIT = "mit"
    APACHE_2 = "apache_2"
    BSD = "bsd"
    GPL = "gpl"
    LGPL = "lgpl"
    MPL = "mpl"
    PROPRIETARY = "proprietary"
    COMMERCIAL = "commercial"
    UNKNOWN = "unknown"


class Interruptibility(StrEnum):
    """What happens if a run is stopped part-way."""

    RESTARTABLE = "restartable"
    CHECKPOINTED = "checkpointed"
    ATOMIC = "atomic"
    UNSAFE = "unsafe"


class Backend(StrEnum):
    """How the capability reaches the tool."""

    IN_PROCESS = "in_process"
    CLI_SUBPROCESS = "cli_subprocess"
    PYTHON_SDK = "python_sdk"
    HTTP_API = "http_api"
    SANDBOX = "sandbox"


class CostModel(SpecModel):
    """What one call costs, as the planner should budget it."""

    cpu_seconds: float = Field(default=0.0, ge=0, description="CPU time of one call.")
    gpu_seconds: float = Field(default=0.0, ge=0, description="GPU time of one call.")
    llm_calls: int = Field(default=0, ge=0, description="Model calls one call makes.")
    usd_per_call: float = Field(default=0.0, ge=0, description="Money one call costs.")


class GpuRequirement(SpecModel):
    """The accelerator a run needs."""

    kind: str = Field(min_length=1, description="GPU model or class, e.g. 'a100'.")
    count: int = Field(default=1, ge=1, description="How many GPUs.")
    memory_gb: float = Field(default=0.0, ge=0, description="Memory per GPU.")


class ResourceRequirements(SpecModel):
    """The dispatch shape: what one run needs to be given."""

    min_vcpus: int = Field(default=1, ge=1, description="Virtual CPUs a run needs.")
    min_memory_gb: float = Field(default=0.5, gt=0, description="Memory a run needs, in GB.")
    gpu: GpuRequirement | None = Field(default=None, description="Accelerator, if any.")
    expected_wallclock_seconds: float | None = Field(
        default=None, gt=0, description="Typical duration of one run; bounds its timeout."
    )


class SecretRequirement(SpecModel):
    """A secret a tool needs, named by kind; never the value itself."""

    name: str = Field(pattern=_NAME, description="Kind of secret, e.g. 'openai_api_key'.")
    purpose: str = Field(min_length=1, description="What the tool uses it for.")


def _check_json_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if schema is None:
        return None
    try:
        draft = validator_class(schema)
        draft.check_schema(schema)
    except SchemaError as error:
        path = "/".join(str(part) for part in error.absolute_path) or "<root>"
        dialect = schema.get("$schema", "2020-12")
        raise ValueError(f"not a valid JSON Schema ({dialect}) at {path}: {error.message}") from None
    return schema


class ToolSpec(SpecModel):
    """Everything a planner, an operator and the catalog know about a tool."""

    name: str = Field(pattern=_NAME, description="Short snake_case name, unique in the catalog.")
    version: str = Field(default="1.0.0", description="Semantic version of the tool's contract.")
    description: str = Field(default="", description="One paragraph on what the tool is for.")
    domain: str = Field(default="general", min_length=1, description="Subject area.")
    backend: Backend = Field(default=Backend.IN_PROCESS, description="How the tool is reached.")
    capabilities: tuple[str, ...] = Field(
        min_length=1,
        description="Capability keys; each must equal the name of one of the tool's @action_executor methods.",
    )
    inputs_schema: dict[str, Any] | None = Field(
        default=None, description="JSON Schema of the main action's arguments."
    )
    outputs_schema: dict[str, Any] | None = Field(default=None, description="JSON Schema of the main actions' results.")
    determinism: Determinism = Field(default=Determinism.DETERMINISTIC, description="Repeatability.")
    side_effecting: bool = Field(default=False, description="Whether the tool changes anything outside itself.")
    cost_model: CostModel = Field(default_factory=CostModel, description="Cost of one call.")
    licensing: Licensing = Field(default=Licensing.UNKNOWN, description="Implementation licence.")
    licensing_notes: str = Field(default="", description="Anything the licence requires of users.")
    headless: HeadlessReadiness = Field(default=HeadlessReadiness.NATIVE, description="Headless use.")
    hitl_frequency: HITLFrequency = Field(
        default=HITLFrequency.AUTONOMOUS, description="How often a person must step in."
    )
    interruptibility: Interruptibility = Field(
        default=Interruptibility.RESTARTABLE, description="Effect of stopping a run part-way."
    )
    execution_locality: ExecutionLocality = Field(default=ExecutionLocality.LOCAL, description="Where the work runs.")
    resource_requirements: ResourceRequirements = Field(
        default_factory=ResourceRequirements, description="What one run needs."
    )
    secrets: tuple[SecretRequirement, ...] = Field(default=(), description="Secrets the tool needs, by kind.")
    tool_id: str = Field(default="", description="Stable identifier, always 'tool:<name>'.")
    policy_tags: tuple[str, ...] = Field(default=(), description="Tags for policy enforcement.")
    required_capabilities: tuple[str, ...] = Field(
        default=(), description="Capability tokens a caller must hold; defaults to (tool_id,)."
    )
    references: tuple[str, ...] = Field(default=(), description="Papers, manuals, URLs.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Anything else, free-form.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def deterministic(self) -> bool:
        """Whether the same inputs always give the same outputs (seed 004's flag)."""
        return self.determinism is Determinism.DETERMINISTIC

    @field_validator("version")
    @classmethod
    def _semver(cls, version: str) -> str:
        if not _SEMVER.match(version):
            raise ValueError(f"{version!r} is not a semantic version (MAJOR.MINOR.PATCH)")
        return version

    @field_validator("inputs_schema", "outputs_schema")
    @classmethod
    def _json_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        return _check_json_schema(schema)

    @field_validator("capabilities", "policy_tags", "required_capabilities")
    @classmethod
    def _no_blank_or_repeated(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        if any(not value.strip() for value in values):
            raise ValueError("entries must be non-empty strings")
        if len(set(values)) != len(values):
            raise ValueError("entries must not repeat")
        return values

    @model_validator(mode="after")
    def _identity(self) -> ToolSpec:
        expected = f"tool:{self.name}"
        if not self.tool_id:
            object.__setattr__(self, "tool_id", expected)
        elif self.tool_id != expected:
            raise ValueError(f"tool_id must be {expected!r}, got {self.tool_id!r}")
        if not self.required_capabilities:
            object.__setattr__(self, "required_capabilities", (expected,))
        return self

    @property
    def major_version(self) -> int:
        """The MAJOR part of the version: a change here breaks callers."""
        return int(self.version.split(".", 1)[0])
