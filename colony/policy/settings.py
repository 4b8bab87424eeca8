"""Where a process reads its policies from, and how often it looks for edits."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from colony.environment import EnvironmentSettings

__all__ = ["SHIPPED_POLICIES", "PolicySettings"]

SHIPPED_POLICIES = Path(__file__).resolve().parents[2] / "policies"
"""The project's own ``policies/``: a permit-all baseline, so a Colony without policies of its own runs as before."""


class PolicySettings(EnvironmentSettings):
    """The policies directory (``COLONY_POLICIES``) and the reload interval.

    Without a directory, ``policies/`` under the Colony home is used when it exists, else the
    project's shipped baseline.
    """

    model_config = SettingsConfigDict(env_prefix="COLONY_POLICIES_", extra="forbid", frozen=True, populate_by_name=True)

    directory: Path | None = Field(
        default=None,
        validation_alias="COLONY_POLICIES",
        description="Directory of *.cedar policy files; default: policies/ under COLONY_HOME, else the baseline.",
    )
    reload_seconds: float = Field(
        default=1.0, gt=0, description="How often a running process looks for edited policy files."
    )

    def resolved(self, home: Path) -> Path:
        """The directory policies are read from."""
        if self.directory is not None:
            return self.directory.expanduser()
        own = home.expanduser() / "policies"
        return own if own.is_dir() else SHIPPED_POLICIES
