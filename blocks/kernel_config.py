"""ColonyKernelConfig: the block an earlier Colony saved for the kernel alone, still read.

``ColonyConfig`` replaced it (it holds every setting, not the kernel's only). A deployment
whose server still has only this block keeps working: ``blocks.load_settings`` reads it,
when no ``ColonyConfig`` of that name exists, as the kernel's settings over the environment,
as before; ``colony blocks save`` writes the ``ColonyConfig`` that supersedes it.
"""

from __future__ import annotations

from typing import Any

from prefect.blocks.core import Block
from pydantic import Field, HttpUrl, SecretStr

from colony.kernel import AttestationMode, KernelSettings

__all__ = ["ColonyKernelConfig"]

# The KernelSettings fields the block carries: all but ``home``, a path on each machine.
BLOCK_FIELDS = tuple(name for name in KernelSettings.model_fields if name != "home")


class ColonyKernelConfig(Block):
    """Where the Colony kernel keeps its state, how it attests outcomes, and its budgets.

    Superseded by ``ColonyConfig``, and read only where no ``ColonyConfig`` of its name exists.
    Fields left empty fall back to the ``COLONY_*`` environment of the process running the flow.

    Example:
        Load a stored configuration and build the kernel from it:
        ```python
        from blocks.kernel_config import ColonyKernelConfig
        from colony.kernel import ColonyKernel

        config = ColonyKernelConfig.load("BLOCK_NAME")
        kernel = ColonyKernel(config.kernel_settings())
        ```
    """

    _block_type_name = "Colony Kernel Config"
    _block_type_slug = "colony-kernel-config"
    _logo_url = HttpUrl(
        "https://raw.githubusercontent.com/PrefectHQ/prefect/420d0d6a78bb6df1fc18bcf188fdad43c1d22ea9/assets/block-logos/secret.png"
    )
    _documentation_url = HttpUrl("https://github.com/colony/colony#running-at-scale")
    _description = "Configuration of the Colony kernel: database, attestation, budgets and traces."

    database_url: str | None = Field(
        default=None,
        title="Database URL",
        description="SQLAlchemy URL of the kernel's database, e.g. postgresql+psycopg://colony@db/colony. "
        "Empty: a SQLite file under COLONY_HOME.",
    )
    attestation: AttestationMode | None = Field(
        default=None,
        description="Whether recorded outcomes must carry the EXECUTE verdict's signed authorization "
        "(off, optional, required). Empty: COLONY_ATTESTATION, else optional.",
    )
    attestation_secret: SecretStr | None = Field(
        default=None,
        description="HMAC key signing authorizations; share it between every process of one colony. "
        "Empty: COLONY_ATTESTATION_SECRET, else a key kept in the database.",
    )
    reservation_lease_seconds: float | None = Field(
        default=None,
        gt=0,
        title="Reservation lease (seconds)",
        description="How long an unreported EXECUTE keeps its budget beyond the work's expected time.",
    )
    agent_budget_share: float | None = Field(
        default=None,
        gt=0,
        le=1,
        title="Agent budget share",
        description="The largest fraction of a period's budget one agent's open reservations may hold.",
    )
    budget_llm_calls: float | None = Field(
        default=None, ge=0, title="LLM calls per period", description="LLM calls allowed per budget period."
    )
    budget_runtime_seconds: float | None = Field(
        default=None, ge=0, title="Runtime seconds per period", description="Tool runtime allowed per budget period."
    )
    budget_period_seconds: float | None = Field(
        default=None, gt=0, title="Budget period (seconds)", description="Length of one budget period."
    )
    attestation_ttl_seconds: float | None = Field(
        default=None,
        gt=0,
        title="Authorization lifetime (seconds)",
        description="How long an authorization stays valid.",
    )
    approval_ttl_seconds: float | None = Field(
        default=None,
        gt=0,
        title="Approval wait (seconds)",
        description="How long a held proposal's approval request waits for a person.",
    )
    default_llm_calls: float | None = Field(
        default=None, ge=0, title="Default LLM calls", description="LLM calls reserved when a proposal names none."
    )
    default_runtime_seconds: float | None = Field(
        default=None,
        ge=0,
        title="Default runtime seconds",
        description="Runtime seconds reserved when a proposal names none.",
    )
    min_strength: float | None = Field(
        default=None, gt=0, title="Minimum trace strength", description="A trace at or below this strength is removed."
    )
    max_strength: float | None = Field(
        default=None, gt=0, title="Maximum trace strength", description="Reinforcement never lifts a trace above this."
    )

    def kernel_settings(self) -> KernelSettings:
        """KernelSettings from this block, the environment filling what the block leaves empty."""
        overrides: dict[str, Any] = {
            name: getattr(self, name) for name in BLOCK_FIELDS if getattr(self, name) is not None
        }
        return KernelSettings(**overrides)
