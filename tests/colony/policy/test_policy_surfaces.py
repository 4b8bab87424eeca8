"""A forbidding policy refuses the call on every surface: HTTP, MCP, the CLI, the client, a flow, an agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import Client

from colony.client import UnifiedToolClient
from colony.errors import PolicyDeniedError
from tests.colony.policy.test_policy_decisions import guide_policies
from tests.colony.surfaces.seed001 import call
from tests.colony.surfaces.test_mcp_stdio import stdio_server
from tests.services.gateway import StartGateway

REPO_ROOT = Path(__file__).resolve().parents[3]
COLONY = str(Path(sys.executable).parent / "colony")
TEXT = {"text": "Write to ann@example.org"}
RULE = "pii-privacy-group-only"


@pytest.fixture
def rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The policies guide's rules and a permit-all, in force for this test's processes (COLONY_POLICIES)."""
    directory = tmp_path / "policies"
    directory.mkdir()
    (directory / "guide.cedar").write_text(guide_policies())
    (directory / "baseline.cedar").write_text("permit(principal, action, resource);\n")
    monkeypatch.setenv("COLONY_POLICIES", str(directory))
    return directory


def test_http_answers_403_naming_the_policy_and_a_group_member_passes(rules: Path, start_gateway: StartGateway) -> None:
    tokens = {
        "clerk": {"agent": "clerk", "capabilities": ["tool:*"]},
        "privacy": {"agent": "dpo", "capabilities": ["tool:*"], "groups": ["privacy"]},
    }
    url = start_gateway(COLONY_POLICIES=str(rules), COLONY_GATEWAY_TOKENS=json.dumps(tokens))
    body = {"target": {"kind": "local"}, "tool_name": "pii_redact", "tool_args": TEXT}
    refused = httpx.post(f"{url}/v1/tool_call", json=body, headers={"Authorization": "Bearer clerk"})
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["type"] == "PolicyDeniedError" and error["policies"] == [RULE]
    assert error["reasons"] == ["only the privacy group calls tools tagged pii"]
    allowed = httpx.post(f"{url}/v1/tool_call", json=body, headers={"Authorization": "Bearer privacy"})
    assert allowed.status_code == 200 and "[REDACTED]" in allowed.json()["result"]["redacted_text"]

    client = UnifiedToolClient(token="clerk")  # the client re-raises the gateway's refusal as the same error
    with pytest.raises(PolicyDeniedError) as raised:
        client.call_tool_remote(http_url=url, tool_name="pii_redact", tool_args=TEXT)
    assert raised.value.policies == [RULE]


async def test_mcp_answers_an_error_naming_the_policy(rules: Path, colony_home: Path) -> None:
    async with Client(stdio_server(colony_home, COLONY_POLICIES=str(rules))) as client:
        answer, failed = await call(client, "pii_redact", TEXT)
    assert failed and RULE in json.dumps(answer)


def test_the_cli_exits_3_naming_the_policy(rules: Path, colony_home: Path) -> None:
    env = {**os.environ, "COLONY_HOME": str(colony_home), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [COLONY, "tools", "call", "pii_redact", json.dumps(TEXT), "--json"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 3, done.stderr
    assert json.loads(done.stdout)["error"]["policies"] == [RULE]


def test_the_in_process_client_raises_the_refusal(rules: Path) -> None:
    with pytest.raises(PolicyDeniedError, match=RULE):
        UnifiedToolClient().call_tool_local("pii_redact", TEXT)


@pytest.mark.usefixtures("prefect_harness")
def test_a_flow_run_fails_with_the_refusal(rules: Path) -> None:
    from flows.tool_call import ToolCall, tool_call

    with pytest.raises(PolicyDeniedError, match=RULE):
        tool_call(ToolCall(tool="pii_redact", arguments=TEXT))


async def test_an_agent_reads_the_refusal_as_a_plain_answer(rules: Path, tmp_path: Path) -> None:
    from colony.agents import AgentSpec, assemble, run
    from colony.kernel import ColonyKernel
    from tests.colony.agents.harness import ENTRIES, Script, agent_runtime

    kernel = ColonyKernel.from_env()
    runtime = agent_runtime(tmp_path / "repo", kernel)
    agent = assemble(AgentSpec(name="clerk-1", capabilities=tuple(ENTRIES)), runtime)
    script = Script([[("redact_pii", TEXT)], "Could not redact."])
    result = await run(agent, "Redact the note", model=script.model)
    assert result.output == "Could not redact."
    [(tool, answer)] = script.returns()
    assert tool == "redact_pii" and answer.startswith("NOT RUN:") and RULE in answer
    await runtime.aclose()
