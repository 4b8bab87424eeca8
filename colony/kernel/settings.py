"""The kernel's configuration, read from ``COLONY_*`` environment variables.

It is the ``kernel`` part of ``colony.settings.ColonySettings``, which deployments keep
whole in a Prefect Block.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import SettingsConfigDict

from colony.environment import EnvironmentSettings
from colony.errors import FieldError, KernelInputError, KernelStoreError
from colony.kernel.models import AttestationMode

__all__ = ["KernelSettings"]


class KernelSettings(EnvironmentSettings):
    """Where the kernel keeps its state and the limits it enforces.

    Every field reads ``COLONY_<FIELD>`` from the environment; an explicit keyword wins.
    """

    model_config = SettingsConfigDict(env_prefix="COLONY_", extra="forbid", frozen=True)

    home: Path = Field(
        default=Path("~/.colony"),
        description="Directory holding the default SQLite database; a path on each machine, never kept in a block.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the kernel's database; default: sqlite file `kernel.db` under `home`.",
    )
    attestation: AttestationMode = Field(
        default=AttestationMode.OPTIONAL,
        description="Whether record_outcome needs the signed authorization an EXECUTE verdict carries.",
    )
    attestation_secret: SecretStr | None = Field(
        default=None,
        description="HMAC key for authorizations; when unset, one is generated once and kept in the database.",
    )
    attestation_ttl_seconds: float = Field(default=3600.0, gt=0, description="How long an authorization stays valid.")
    approval_ttl_seconds: float = Field(
        default=3600.0, gt=0, description="How long a held proposal's approval request waits for a person."
    )
    max_pending_approvals: int = Field(
        default=50,
        ge=1,
        description="How many approval requests one agent may have waiting for a person; a call held past "
        "that is refused until a person decides (or the tick expires) some of them.",
    )
    reservation_lease_seconds: float = Field(
        default=300.0,
        gt=0,
        description="How long an EXECUTE's budget reservation outlives the work's own expected time "
        "(runs_within_seconds, else its runtime estimate) before it is released unused; never past the "
        "authorization's TTL.",
    )
    agent_budget_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="The largest fraction of a period's budget, per dimension, one agent's open "
        "reservations may hold at once; a proposal that would pass it is refused.",
    )
    budget_llm_calls: float = Field(default=500, ge=0, description="LLM calls allowed per budget period.")
    budget_runtime_seconds: float = Field(default=3600.0, ge=0, description="Runtime seconds allowed per period.")
    budget_period_seconds: float = Field(default=86400.0, gt=0, description="Length of a budget period.")
    default_llm_calls: float = Field(default=1, ge=0, description="LLM calls reserved when a proposal names none.")
    default_runtime_seconds: float = Field(
        default=10.0, ge=0, description="Runtime seconds reserved when a proposal names none."
    )
    min_strength: float = Field(default=0.01, gt=0, description="A trace at or below this strength is removed.")
    max_strength: float = Field(default=10.0, gt=0, description="Reinforcement never lifts a trace above this.")

    @classmethod
    def from_env(cls) -> KernelSettings:
        """The settings from ``COLONY_*`` variables; a bad one is a KernelInputError naming the variable."""
        try:
            return cls()
        except ValidationError as error:
            problems = [
                FieldError(field=f"COLONY_{'_'.join(map(str, item['loc'])).upper()}", message=item["msg"])
                for item in error.errors()
            ]
            summary = "; ".join(f"{p.field}: {p.message}" for p in problems)
            raise KernelInputError(f"invalid kernel settings: {summary}", errors=problems) from None

    def checked_home(self) -> Path:
        """``home``, created if missing; a KernelStoreError naming it when it cannot hold the database.

        Checked before any command does its work, so a home that is a file, cannot be created or
        is read-only is one clear line rather than a traceback from deep inside SQLite.
        """
        home = self.home.expanduser()
        try:
            home.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise KernelStoreError(f"COLONY_HOME {home} is not a directory (it is a file)") from None
        except OSError as error:
            raise KernelStoreError(f"COLONY_HOME {home} cannot be created: {error.strerror or error}") from None
        try:
            with tempfile.TemporaryFile(dir=home):
                pass
        except OSError as error:
            raise KernelStoreError(f"COLONY_HOME {home} is not writable: {error.strerror or error}") from None
        return home

    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file under ``home`` (created if missing)."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.checked_home() / 'kernel.db'}"

    def budget_limits(self) -> dict[str, float]:
        """The per-period ceiling of each ledger dimension."""
        return {"llm_calls": self.budget_llm_calls, "runtime_seconds": self.budget_runtime_seconds}

    def share_caps(self) -> dict[str, float]:
        """What one agent may hold at once, per ledger dimension."""
        return {name: limit * self.agent_budget_share for name, limit in self.budget_limits().items()}

    def reservation_expiry(self, now: float, runs_within: float) -> float:
        """When a reservation made at ``now`` for work expected to take ``runs_within`` seconds is released."""
        lease = self.reservation_lease_seconds + min(runs_within, self.attestation_ttl_seconds)
        return now + min(lease, self.attestation_ttl_seconds)

    def default_estimate(self) -> dict[str, float]:
        """What a proposal reserves when it brings no budget estimate."""
        return {"llm_calls": self.default_llm_calls, "runtime_seconds": self.default_runtime_seconds}
