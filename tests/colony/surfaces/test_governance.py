"""A side-effecting catalog tool over MCP and HTTP: proposed, run only on EXECUTE, recorded with the verdict."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.colony.surfaces.seed001 import call, mcp_over_http

CASE = {
    "rationale": "Record the outcome of the nightly calibration run for the operators to review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
    "evidence": {"tests": ["tests/colony/surfaces/test_governance.py"]},
}


async def test_the_gate_refuses_a_sandbox_agent_and_nothing_runs(governed_gateway: tuple[str, Path]) -> None:
    url, notes = governed_gateway
    response = httpx.post(
        f"{url}/v1/tool_call",
        json={"tool_name": "append_note", "tool_args": {"note": "from a newcomer"}, **CASE},
        headers={"X-Colony-Agent": "newcomer"},
        timeout=30,
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["type"] == "ActionNotExecutedError"
    assert error["verdict"]["decision"] == "refuse"
    assert error["verdict"]["reason"] == "SANDBOX role: no write-path gate passes"
    assert not notes.exists()
    async with mcp_over_http(url, **{"X-Colony-Agent": "newcomer"}) as client:
        answer, failed = await call(client, "append_note", {"note": "again", **CASE})
        assert failed and answer["verdict"]["decision"] == "refuse"
        pheromones, _ = await call(
            client, "colony_pheromone_query", {"location": "tool:append_note", "signal_type": "failure"}
        )
        assert pheromones and pheromones[0]["strength"] > 0
    assert not notes.exists()


async def test_a_trusted_agent_is_gated_executed_and_recorded(governed_gateway: tuple[str, Path]) -> None:
    url, notes = governed_gateway
    async with mcp_over_http(url, **{"X-Colony-Agent": "scribe"}) as client:
        for _ in range(3):
            answer, failed = await call(
                client,
                "colony_record_outcome",
                {
                    "agent_id": "scribe",
                    "action_type": "run_tests",
                    "target": "colony.notes",
                    "actual_outcome": "all tests pass",
                    "tests_passed": True,
                    "human_feedback": 1.0,
                },
            )
            assert not failed
        assert answer["role"] == "repair_ant"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        annotations = tools["append_note"].annotations
        assert annotations is not None and annotations.destructive_hint is True and annotations.read_only_hint is False
        assert {"rationale", "rollback_plan", "evidence"} <= set(tools["append_note"].input_schema["properties"])
        assert "agent_id" not in tools["append_note"].input_schema["properties"]  # identity is not an argument

        answer, failed = await call(client, "append_note", {"note": "calibration ok", **CASE})
        assert not failed, answer
        assert answer["verdict"]["decision"] == "execute"
        assert answer["result"]["notes"] == 1
        assert answer["outcome"]["status"] == "recorded"
        profile, _ = await call(client, "colony_agent_profile", {"agent_id": "scribe"})
        assert profile["consequence_history"][-1] == answer["outcome"]["consequence_id"]
    assert notes.read_text() == "calibration ok\n"

    response = httpx.post(
        f"{url}/v1/tool_call",
        json={"tool_name": "append_note", "tool_args": {"note": "over http"}, **CASE},
        headers={"X-Colony-Agent": "scribe"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["verdict"]["decision"] == "execute" and body["result"]["notes"] == 2
    assert body["outcome"]["status"] == "recorded"
    assert notes.read_text().splitlines() == ["calibration ok", "over http"]
