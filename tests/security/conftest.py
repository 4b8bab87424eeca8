"""A repository and gateways to attack: a side-effecting tool that writes a file, and principals by token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.colony.surfaces.sample_tools import sample_repo
from tests.services.gateway import StartGateway

TOKENS = {
    "agent-token": {"agent": "engineer-1", "capabilities": ["tool:*", "kernel:read", "kernel:propose"]},
    "convert-token": {"agent": "converter", "capabilities": ["tool:unit_convert"]},
    "recorder-token": {"agent": "engineer-1", "capabilities": ["kernel:read", "kernel:record"]},
    "ops-token": {"agent": "ops", "capabilities": ["*"], "operator": True},
    "mallory-token": {"agent": "mallory", "capabilities": ["kernel:read", "kernel:propose", "kernel:record"]},
    "mallory-http-token": {"agent": "mallory-http", "capabilities": ["kernel:read", "kernel:propose", "kernel:record"]},
    "reviewer-token": {"agent": "reviewer", "capabilities": ["kernel:read", "kernel:record", "kernel:approve"]},
}
CASE = {
    "rationale": "Record the calibration result for the operators to review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
    "evidence": {"tests": ["tests/security/test_pipeline_attacks.py"]},
}


@pytest.fixture(scope="session")
def attack_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose catalog is append_note (side-effecting), unit_convert and a tool needing a secret."""
    root = sample_repo(tmp_path_factory.mktemp("attack-repo"))
    path = root / ".colony" / "tool-registry.json"
    document = json.loads(path.read_text())
    document["tools"].append(
        {"name": "secret_double", "capability": "whoami", "capability_fqn": "tests.doubles.SecretToolDouble"}
    )
    path.write_text(json.dumps(document))
    return root


@pytest.fixture(scope="session")
def secured(
    start_session_gateway: StartGateway, attack_repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """A gateway whose tokens are bound to principals; its URL and its COLONY_HOME."""
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    home = tmp_path_factory.mktemp("secured-home")
    url = start_session_gateway(
        COLONY_REPO_ROOT=str(attack_repo), COLONY_GATEWAY_TOKENS_FILE=str(tokens), COLONY_HOME=str(home)
    )
    return url, home
