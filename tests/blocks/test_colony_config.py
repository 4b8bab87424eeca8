"""ColonyConfig: a Prefect block written like Prefect's own, holding the whole settings model, secrets obfuscated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast
from uuid import uuid4

import pytest
from prefect.blocks.core import Block
from prefect.client.orchestration import get_client
from prefect.testing.standard_test_suites import BlockStandardTestSuite
from pydantic import BaseModel, SecretStr

from blocks import ColonyConfig
from colony.settings import MACHINE_PATHS, ColonySettings
from colony.upstream import UpstreamSettings
from colony.upstream.pins import fingerprint
from tests.services.settings import SECRET_VARIABLES as SECRETS

OTHER_VALUES = {
    "COLONY_DATABASE_URL": "sqlite:////tmp/shared-kernel.db",
    "COLONY_ATTESTATION": "required",
    "COLONY_BUDGET_LLM_CALLS": "42",
    "COLONY_MIN_STRENGTH": "0.05",
    "COLONY_GATEWAY_HOST": "0.0.0.0",
    "COLONY_GATEWAY_ALLOWED_ORIGINS": "https://ui.example",
    "COLONY_GATEWAY_RATE_LIMITS": '{"default": {"rate": 5, "burst": 10}}',
    "COLONY_SANDBOX_IMAGES": '{"python": {"image": "colony-sandbox/python:1", "pids_limit": 128}}',
    "COLONY_HPC_ENDPOINT": "http://hpc.example:8765",
    "COLONY_HPC_JOB_DEFINITIONS": '{"fdtd_sweep": "fdtd:3"}',
    "COLONY_HPC_LIMITS__MAX_GPUS": "2",
}


class TestColonyConfigStandards(BlockStandardTestSuite):
    @pytest.fixture
    def block(self) -> type[Block]:
        return ColonyConfig

    # Fetches the logo over the network; the block ships no logo and this machine has no network.
    test_has_a_valid_image = None  # type: ignore[assignment]


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ColonySettings:
    """This machine's settings: a secret in every part, values away from the defaults, paths on disk."""
    paths = {
        "COLONY_HPC_TOKENS_FILE": str(tmp_path / "tokens.json"),
        "COLONY_GATEWAY_JWKS_FILE": "/etc/jwks.json",
        "COLONY_MCP_SERVERS": str(tmp_path / "mcp-servers.json"),
    }
    for name, value in {**SECRETS, **OTHER_VALUES, **paths}.items():
        monkeypatch.setenv(name, value)
    return ColonySettings.from_env()


def stored_document(name: str, *, include_secrets: bool) -> dict[str, Any]:
    with get_client(sync_client=True) as client:
        document = client.read_block_document_by_name(
            name, block_type_slug="colony-config", include_secrets=include_secrets
        )
    data: dict[str, Any] = document.data
    return data


def model_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every field of ``model``, and of every model nested in it, as a path."""
    found = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.extend(model_paths(annotation, (*prefix, name)))
        else:
            found.append((*prefix, name))
    return found


def test_each_secret_is_declared_where_the_server_finds_it() -> None:
    declared = ColonyConfig.model_json_schema()["secret_fields"]
    assert declared == [
        "settings.kernel.attestation_secret",
        "settings.gateway.tokens",
        "settings.gateway.peers",  # a peer's token sits in a list: the list is the secret
        "settings.hpc.token",
        "settings.hpc.tokens",
    ]


@pytest.mark.usefixtures("prefect_harness")
def test_a_saved_block_loads_back_as_the_same_settings(environment: ColonySettings) -> None:
    name = f"colony-{uuid4().hex[:8]}"
    ColonyConfig.from_settings(environment).save(name)
    loaded = cast(ColonyConfig, ColonyConfig.load(name)).colony_settings()
    assert loaded == environment  # secrets included; this machine's paths put back
    assert loaded.kernel.attestation_secret == SecretStr(SECRETS["COLONY_ATTESTATION_SECRET"])
    assert loaded.gateway.peers[0].token == SecretStr("peer-token-secret")


@pytest.mark.usefixtures("prefect_harness")
def test_the_stored_document_shows_no_secret(environment: ColonySettings) -> None:
    name = f"colony-{uuid4().hex[:8]}"
    ColonyConfig.from_settings(environment).save(name)
    shown = json.dumps(stored_document(name, include_secrets=False))
    for secret in ("attest-", "hpc-token-secret", "hpc-table-secret", "gateway-table-secret", "peer-token-secret"):
        assert secret not in shown
    assert "http://hpc.example:8765" in shown and "fdtd:3" in shown  # the rest is readable
    assert "peer-token-secret" in json.dumps(stored_document(name, include_secrets=True))  # kept, encrypted


@pytest.mark.usefixtures("prefect_harness")
def test_the_block_carries_every_field_of_every_part_but_the_paths_on_disk(environment: ColonySettings) -> None:
    name = f"colony-{uuid4().hex[:8]}"
    ColonyConfig.from_settings(environment).save(name)
    document = stored_document(name, include_secrets=True)["settings"]
    machine = {(path.part, path.field) for path in MACHINE_PATHS}
    loaded = cast(ColonyConfig, ColonyConfig.load(name)).settings
    paths = model_paths(ColonySettings)
    assert {path[0] for path in paths} == set(ColonySettings.model_fields)
    assert ("hpc", "limits", "max_gpus") in paths and ("gateway", "rate_limits", "default", "rate") in paths
    for path in paths:
        stored: Any = document
        for step in path:
            assert step in stored, f"the block does not keep {'.'.join(path)}"
            stored = stored[step]
        value: Any = environment
        kept: Any = loaded
        for step in path:
            value, kept = getattr(value, step), getattr(kept, step)
        if path[:2] in machine:
            assert stored is None or stored == "~/.colony", path  # never the saving machine's path
        else:
            assert kept == value, f"{'.'.join(path)} changed on its way through the block"


@pytest.mark.usefixtures("prefect_harness")
def test_the_block_carries_declared_mcp_servers_and_their_pins(environment: ColonySettings) -> None:
    lookup = {"name": "lookup", "description": "Look up a key.", "inputSchema": {"type": "object"}}
    servers = {
        "tickets": {"url": "https://tickets.example/mcp", "headers": {"Authorization": "Bearer ${secret:tickets}"}},
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
    }
    pins = {
        "tickets": {"lookup": {"sha256": fingerprint(lookup), "pinned_at": "2026-01-01T00:00:00", "definition": lookup}}
    }
    upstream = UpstreamSettings(servers={"mcpServers": servers}, pins=pins)
    settings = environment.model_copy(update={"upstream": upstream})
    name = f"colony-{uuid4().hex[:8]}"
    ColonyConfig.from_settings(settings).save(name)
    loaded = cast(ColonyConfig, ColonyConfig.load(name)).colony_settings()
    assert loaded.upstream == upstream and loaded == settings
    assert loaded.upstream.pinned().servers()["tickets"]["lookup"].definition == lookup
    stored = stored_document(name, include_secrets=False)["settings"]["upstream"]
    assert "${secret:tickets}" in json.dumps(stored) and stored["servers_file"] is None  # a reference, no path
