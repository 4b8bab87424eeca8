"""Tools for the policy tests: a nested input a policy reads field by field, and a side-effecting write."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from colony import LocalToolCapability, ToolSpec, action_executor


class Target(BaseModel):
    """Where a release goes."""

    env: str = Field(description="The environment: dev, staging or prod.")
    path: str = Field(description="The directory written.")
    hosts: list[str] = Field(default_factory=list, description="Hosts it reaches.")


class Release(BaseModel):
    """What is released, and where."""

    name: str
    target: Target
    replicas: int = 1


class Released(TypedDict):
    """Where the release was written."""

    written: str


class Deployer(LocalToolCapability):
    """Writes a release note under COLONY_HOME: a side effect with a nested input."""

    spec = ToolSpec(
        name="deployer",
        description="Record a release (name, target environment and path, replicas).",
        capabilities=("deploy",),
        side_effecting=True,
        domain="operations",
        policy_tags=("writes_files", "deploys"),
    )

    @action_executor
    def deploy(self, *, release: Release, dry_run: bool = False) -> Released:
        """Record ``release``.

        Args:
            release: What to release and where.
            dry_run: Only say what would be written.
        """
        path = Path(os.environ["COLONY_HOME"]) / "releases.jsonl"
        if not dry_run:
            with path.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(release.model_dump()) + "\n")
        return Released(written=str(path))


def releases() -> list[dict[str, object]]:
    """The releases the deployer wrote."""
    path = Path(os.environ["COLONY_HOME"]) / "releases.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
