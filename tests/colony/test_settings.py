"""ColonySettings: every part from its COLONY_* variables, bad ones named, paths on disk kept per machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from colony.errors import KernelInputError, SandboxError, SettingsError, SurfaceError
from colony.hpc import HPCSettings
from colony.hpc.defaults import default_settings
from colony.sandbox.config import default_config
from colony.settings import MACHINE_PATHS, ColonySettings, use_settings
from tests.services.settings import SECRET_VARIABLES as SECRETS


def test_every_part_reads_its_variables(monkeypatch: pytest.MonkeyPatch, colony_home: Path) -> None:
    for name, value in {
        **SECRETS,
        "COLONY_BUDGET_LLM_CALLS": "42",
        "COLONY_GATEWAY_PORT": "9999",
        "COLONY_SANDBOX_IMAGES": '{"python": {"image": "py:1"}}',
        "COLONY_HPC_LIMITS__MAX_VCPUS": "8",
    }.items():
        monkeypatch.setenv(name, value)
    settings = ColonySettings.from_env()
    assert settings.kernel.budget_llm_calls == 42 and settings.kernel.home == colony_home
    assert settings.gateway.port == 9999 and settings.gateway.token_table()["gateway-table-secret"].operator
    assert settings.gateway.peers[0].token == SecretStr("peer-token-secret")
    assert settings.sandbox.role("python").image == "py:1" and settings.sandbox.role("busybox")
    assert settings.hpc.limits.max_vcpus == 8


@pytest.mark.parametrize(
    ("variable", "value", "error", "message"),
    [
        ("COLONY_BUDGET_LLM_CALLS", "lots", KernelInputError, "COLONY_BUDGET_LLM_CALLS"),
        ("COLONY_GATEWAY_PORT", "eighty", SurfaceError, "gateway setting port"),
        ("COLONY_GATEWAY_TOKENS", "[1, 2]", SurfaceError, "COLONY_GATEWAY_TOKENS: tokens must be a JSON object"),
        ("COLONY_SANDBOX_IMAGES", "{not json", SandboxError, "COLONY_SANDBOX_IMAGES is not valid JSON"),
        ("COLONY_HPC_LIMITS__MAX_VCPUS", "many", SettingsError, "COLONY_HPC_LIMITS__MAX_VCPUS: Input should be"),
        ("COLONY_HPC_JOB_DEFINITIONS", "{nope", SettingsError, "COLONY_HPC_JOB_DEFINITIONS: not valid JSON"),
    ],
)
def test_a_bad_variable_is_named(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, error: type[Exception], message: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(error, match=message):
        ColonySettings.from_env()


def test_paths_on_disk_stay_with_each_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    here = {"COLONY_HOME": tmp_path / "home", "COLONY_HPC_TOKENS_FILE": tmp_path / "t.json"}
    for name, value in {**here, "COLONY_GATEWAY_JWKS_FILE": tmp_path / "jwks.json"}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("COLONY_MCP_SERVERS", str(tmp_path / "mcp-servers.json"))
    settings = ColonySettings.from_env()
    kept = settings.without_machine_paths()
    assert (kept.kernel.home, kept.hpc.tokens_file, kept.gateway.jwks_file) == (Path("~/.colony"), None, None)
    assert kept.upstream.servers_file is None
    elsewhere = {"COLONY_HOME": "/srv/colony", "COLONY_MCP_SERVERS": "/srv/mcp.json"}
    there = kept.with_machine_paths(elsewhere)
    assert (there.kernel.home, there.hpc.tokens_file, there.gateway.jwks_file) == (Path("/srv/colony"), None, None)
    assert there.upstream.servers_file == Path("/srv/mcp.json")
    assert kept.with_machine_paths() == settings  # this machine's environment puts them back
    assert {(path.part, path.field) for path in MACHINE_PATHS} == {
        ("kernel", "home"),
        ("hpc", "tokens_file"),
        ("gateway", "jwks_file"),
        ("gateway", "tokens_file"),
        ("upstream", "servers_file"),
    }


def test_revealed_settings_rebuild_the_same_settings_secrets_included(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    settings = ColonySettings.from_env()
    text = json.dumps(settings.revealed())
    assert all(secret in text for secret in ("attest-", "hpc-token-secret", "gateway-table-secret", "peer-token"))
    assert ColonySettings.model_validate_json(text) == settings
    shown = settings.model_dump_json() + repr(settings)
    assert not any(secret in shown for secret in ("attest-", "hpc-token-secret", "table-secret", "peer-token"))


def test_settings_given_as_data_read_no_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_HPC_JOB_DEFINITIONS", '{"fdtd_sweep": "fdtd:3"}')
    document = ColonySettings.from_env().revealed()  # what a block or a parent process hands over
    monkeypatch.setenv("COLONY_HPC_JOB_DEFINITIONS", '{"local_tool": "local:1"}')
    monkeypatch.setenv("COLONY_BUDGET_LLM_CALLS", "7")
    document["kernel"].pop("budget_llm_calls")  # a field the document lacks takes its default, not a variable
    settings = ColonySettings.model_validate(document)
    assert settings.hpc.job_definitions == {"fdtd_sweep": "fdtd:3"} and settings.kernel.budget_llm_calls == 500
    assert HPCSettings().job_definitions == {"local_tool": "local:1"}  # built alone, a part still reads them
    monkeypatch.setenv("COLONY_HPC_LIMITS", "{not json")  # a broken variable elsewhere does not break the data
    assert ColonySettings.model_validate(document) == settings
    monkeypatch.setenv("COLONY_UPSTREAM_SERVERS", '{"mcpServers": {"local": {"command": "x"}}}')
    assert ColonySettings.model_validate(document).upstream.servers is None  # no server of this machine's joins


def test_chosen_settings_are_the_process_defaults_until_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_SANDBOX_IMAGES", '{"python": {"image": "py:1"}}')
    monkeypatch.setenv("COLONY_HPC_ENDPOINT", "http://127.0.0.1:9301")
    chosen = ColonySettings.from_env()
    monkeypatch.delenv("COLONY_SANDBOX_IMAGES")
    monkeypatch.setenv("COLONY_HPC_ENDPOINT", "http://127.0.0.1:9302")
    use_settings(chosen)
    assert "python" in default_config().roles and default_settings().endpoint == "http://127.0.0.1:9301"
    use_settings(None)
    assert "python" not in default_config().roles and default_settings().endpoint == "http://127.0.0.1:9302"
