"""Seed 001's eight example invocations, run through any MCP client, checked against the seed's answers."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

EXAMPLES: dict[str, dict[str, Any]] = json.loads((Path(__file__).parent / "seed001_examples.json").read_text())
KERNEL_TOOLS = list(EXAMPLES)


def same_shape(actual: Any, expected: Any) -> bool:
    """Same JSON types, and for objects the same keys, recursively (values may differ)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and set(actual) == set(expected)
    if isinstance(expected, bool):
        return isinstance(actual, bool)
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and not isinstance(actual, bool)
    return type(actual) is type(expected)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
    """A tool's answer (decoded from its text content) and whether it is an error result.

    A success carries its object value as structured content too; an error carries
    none, except a colony_* tool's, which carries the seed's ``{"error": message}``.
    """
    result = await client.call_tool(name, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    decoded = json.loads(text)
    if not result.is_error:
        assert result.structured_content == (decoded if isinstance(decoded, dict) else None)
    elif name in EXAMPLES:
        assert result.structured_content == {"error": decoded["error"]}
    else:
        assert result.structured_content is None
    return decoded, bool(result.is_error)


async def exercise_seed_examples(client: Client) -> None:
    """Every colony_* example in the seed's order, on a fresh kernel, with the seed's values where they are fixed."""
    seed = {name: example["result"] for name, example in EXAMPLES.items()}
    answers = {}
    for name in KERNEL_TOOLS:
        answer, failed = await call(client, name, EXAMPLES[name]["arguments"])
        assert not failed, (name, answer)
        answers[name] = answer
    assert answers["colony_propose_action"] == seed["colony_propose_action"]

    recorded = answers["colony_record_outcome"]
    assert same_shape(recorded, seed["colony_record_outcome"])
    assert (recorded["status"], recorded["trust_score"], recorded["role"]) == ("recorded", 0.173, "sandbox")
    uuid.UUID(recorded["consequence_id"])

    profile = answers["colony_agent_profile"]
    assert same_shape(profile, seed["colony_agent_profile"])
    assert (profile["agent_id"], profile["role"], profile["trust_score"]) == ("repair-agent-42", "sandbox", 0.173)
    assert profile["consequence_history"][-1] == recorded["consequence_id"]

    status = answers["colony_status"]
    assert set(status) == set(seed["colony_status"])
    assert status["tick_count"] == 0
    assert same_shape(status["pheromone_summary"], seed["colony_status"]["pheromone_summary"])
    for signal in status["pheromone_summary"]["top_signals"]:
        assert same_shape(signal, seed["colony_status"]["pheromone_summary"]["top_signals"][0])

    (failure,) = answers["colony_pheromone_query"]
    assert same_shape(failure, seed["colony_pheromone_query"][0])
    assert (failure["location"], failure["signal_type"]) == ("codomyrmex.git_operations.core", "failure")

    assert answers["colony_falsify_plan"] == seed["colony_falsify_plan"]

    report = answers["colony_pruning_report"]
    assert same_shape(report, seed["colony_pruning_report"])
    assert (report["candidates"], report["total_candidates"]) == ([], 0)

    tick = answers["colony_tick"]
    assert set(tick) == set(status)
    assert tick["tick_count"] == 1


async def exercise_bad_arguments(client: Client) -> None:
    """Bad arguments give error results naming the field; the session keeps serving."""
    answer, failed = await call(client, "colony_agent_profile", {})
    assert failed and "agent_id" in answer["error"]
    assert (answer["type"], answer["code"], answer["retryable"]) == ("KernelInputError", -32602, False)
    assert answer["errors"] == [{"field": "agent_id", "message": "required argument is missing", "expected": None}]

    answer, failed = await call(client, "colony_pheromone_query", {"location": "a.b", "signal_type": "gossip"})
    assert failed and "signal_type" in answer["error"]

    answer, failed = await call(
        client, "colony_record_outcome", {**EXAMPLES["colony_record_outcome"]["arguments"], "tests_passed": "yes"}
    )
    assert failed and "tests_passed" in answer["error"]

    answer, failed = await call(client, "colony_falsify_plan", {"plan_json": "{not json"})
    assert failed and "plan_json" in answer["error"]

    answer, failed = await call(client, "unit_convert", {"value": 10, "from_unit": "invalid_unit", "to_unit": "km"})
    assert failed and answer["error"] == "Unsupported unit: invalid_unit"
    assert (answer["type"], answer["code"]) == ("ToolInputError", -32602)
    assert answer["errors"][0]["field"] == "from_unit"

    answer, failed = await call(client, "unit_convert", {"value": "ten", "from_unit": "mi", "to_unit": "km"})
    assert failed and "value" in answer["error"]

    answer, failed = await call(client, "colony_status", {})
    assert not failed and answer["tick_count"] >= 0


@asynccontextmanager
async def mcp_over_http(url: str, **headers: str) -> AsyncIterator[Client]:
    """The official client on the gateway's /mcp, sending ``headers`` (e.g. X-Colony-Agent) on every request."""
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client
