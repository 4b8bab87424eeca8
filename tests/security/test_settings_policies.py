"""The policies a process's settings name are the ones its gateway enforces, never what its environment says.

A block (or a gateway parent's hand-over) names the operators' policy directory; a gateway
worker whose own environment names a laxer one, or none, must still refuse what the
settings' policies forbid.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from colony.cli.serve import gateway_worker_app
from colony.cli.settings import WORKER_SETTINGS_VARIABLE, settings_for_workers
from colony.errors import PolicyDeniedError
from colony.policy import PolicySettings
from colony.runtime import CallRequest, Principal
from colony.settings import ColonySettings
from flows._runtime import flow_runtime

FORBID_CONVERSIONS = """
@id("no-conversions")
@reason("conversions are closed on this gateway")
forbid(principal, action == Action::"unit_convert.convert_units", resource);
permit(principal, action, resource);
"""
CONVERT = {"tool_name": "unit_convert", "tool_args": {"value": 1, "from_unit": "km", "to_unit": "m"}}


@pytest.fixture
def strict_settings(monkeypatch: pytest.MonkeyPatch, colony_home: Path, tmp_path: Path) -> ColonySettings:
    """Settings naming a policy directory that forbids conversions, in an environment naming a lax one."""
    strict = tmp_path / "strict"
    strict.mkdir()
    (strict / "rules.cedar").write_text(FORBID_CONVERSIONS)
    lax = tmp_path / "lax"
    lax.mkdir()
    (lax / "rules.cedar").write_text("permit(principal, action, resource);\n")
    monkeypatch.setenv("COLONY_POLICIES", str(lax))  # what this process's own environment says
    monkeypatch.setenv("COLONY_GATEWAY_TOKENS", '{"ops-token": {"agent": "ops", "capabilities": ["*"]}}')
    monkeypatch.setenv(WORKER_SETTINGS_VARIABLE, "")  # restored (unset) after the test
    return ColonySettings.from_env().model_copy(update={"policy": PolicySettings(directory=strict)})


def test_a_gateway_worker_enforces_the_policies_its_settings_name(strict_settings: ColonySettings) -> None:
    settings_for_workers(strict_settings)
    with TestClient(gateway_worker_app(), base_url="http://127.0.0.1:8787") as client:
        answered = client.post("/v1/tool_call", json=CONVERT, headers={"authorization": "Bearer ops-token"})
    assert answered.status_code == 403, answered.text
    assert "no-conversions" in answered.text and "conversions are closed" in answered.text


async def test_a_flow_runtime_enforces_the_policies_its_settings_name(strict_settings: ColonySettings) -> None:
    runtime = flow_runtime(strict_settings)
    with pytest.raises(PolicyDeniedError, match="conversions are closed"):
        await runtime.call(CallRequest("unit_convert", CONVERT["tool_args"]), Principal.of("ops", ["*"]))
