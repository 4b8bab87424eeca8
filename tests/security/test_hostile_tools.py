"""Hostile input to the catalog tools gets an answer or a clear refusal, never a frozen or flooded process.

The calls run in a child process under a hard time limit (see ``hostile_calls``), so
a regression (a backtracking regex, a loop, a quadratic walk) fails here instead of
hanging CI. Tests assert on outcomes, never on time. Then the worst of them go
through a real gateway (uvicorn, its own process) and its /mcp.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.security.hostile_calls import CASES, EVIL
from tests.services.gateway import StartGateway

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Far above what the calls need (seconds); only a runaway comes near it.
WATCHDOG_SECONDS = 300


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, Any]]:
    """Every hostile call's outcome, from a child process killed if it outlives the watchdog."""
    try:
        child = subprocess.run(
            [sys.executable, "-m", "tests.security.hostile_calls"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=WATCHDOG_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the hostile calls did not finish within {WATCHDOG_SECONDS} s: something runs away")
    assert child.returncode == 0, child.stderr[-3000:]
    parsed: dict[str, dict[str, Any]] = json.loads(child.stdout)
    assert set(parsed) == set(CASES)
    return parsed


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("redos_pattern", f"{EVIL!r} does not match '^(a+)+$'"),
        ("redos_pattern_long", "does not match '^(a|aa)+$'"),
        ("redos_additional_properties", f"{EVIL!r} does not match any of the regexes: '^(a+)+$'"),
        ("redos_unevaluated_properties", f"Unevaluated properties are not allowed ({EVIL!r} was unexpected)"),
        ("redos_behind_subschema_dialect", f"{EVIL!r} does not match '^(a+)+$'"),
    ],
)
def test_backtracking_bombs_get_their_verdict(outcomes: dict[str, dict[str, Any]], case: str, message: str) -> None:
    outcome = outcomes[case]
    assert outcome["outcome"] == "result", outcome
    assert outcome["result"]["valid"] is False
    assert message in outcome["result"]["errors"][0]


def test_a_pattern_matching_no_key_is_simply_valid(outcomes: dict[str, dict[str, Any]]) -> None:
    assert outcomes["redos_pattern_properties"]["result"] == {"valid": True, "errors": [], "error_details": []}


def test_unique_items_over_a_gateway_sized_array_gets_its_verdict(outcomes: dict[str, dict[str, Any]]) -> None:
    assert outcomes["unique_items"]["result"] == {"valid": True, "errors": [], "error_details": []}


@pytest.mark.parametrize(
    ("case", "field", "message"),
    [
        ("redos_through_meta_schema", "schema", "$ref that does not resolve"),
        ("backreference", "schema", "backreference '\\1' cannot run in linear time"),
        ("format_regex_parens", "data", "groups nest more than 100 deep"),
        ("pattern_parens", "schema", "groups nest more than 100 deep"),
        ("ref_self", "schema", "leads back to a schema already checking the same value"),
        ("ref_cycle", "schema", "leads back to a schema already checking the same value"),
        ("ref_chain", "schema", "nests deeper than the interpreter allows"),
        ("deep_data", "data", "more than 64 levels deep"),
        ("deep_schema", "schema", "more than 64 levels deep"),
        ("schema_times_data", "data", "takes more than 2,000,000 steps"),
        ("slow_format_many_times", "data", "takes more than 2,000,000 steps"),
        ("meta_schema_check", "schema", "meta-schema takes more than 2,000,000 steps"),
        ("amplifier_issue_14", "replacement", "at most 64 characters"),
    ],
)
def test_what_cannot_be_answered_safely_is_an_input_error_on_its_field(
    outcomes: dict[str, dict[str, Any]], case: str, field: str, message: str
) -> None:
    outcome = outcomes[case]
    assert (outcome["outcome"], outcome["type"], outcome["fields"]) == ("error", "ToolInputError", [field]), outcome
    assert message in outcome["message"]


def test_the_worst_amplification_the_caps_allow_stays_bounded(outcomes: dict[str, dict[str, Any]]) -> None:
    # 256 KiB of 6-character addresses, each replaced by 64 characters: about 9x, nowhere near 240 MB.
    outcome = outcomes["amplifier_at_the_caps"]
    assert outcome["outcome"] == "result"
    assert outcome["size"] < 10 * outcome["text_size"] < 3_000_000


@pytest.fixture(scope="module")
def default_gateway(start_gateway: StartGateway) -> str:
    """A gateway with the shipped caps (256 KiB of arguments, 1 MiB bodies, 30 s per call)."""
    return start_gateway()


def tool_call(base: str, tool: str, args: dict[str, Any]) -> httpx.Response:
    body = {"target": {"kind": "local"}, "tool_name": tool, "tool_args": args}
    return httpx.post(f"{base}/v1/tool_call", json=body, timeout=60)


def test_the_redos_call_through_the_gateway_answers_and_the_gateway_stays_up(default_gateway: str) -> None:
    response = tool_call(default_gateway, "jsonschema_validate", {"schema": {"pattern": "^(a+)+$"}, "data": EVIL})
    assert response.status_code == 200, response.text
    assert response.json()["result"]["valid"] is False
    looping = tool_call(default_gateway, "jsonschema_validate", {"schema": {"$ref": "#"}, "data": 1})
    assert looping.status_code == 400
    assert looping.json()["error"]["errors"][0]["field"] == "schema"
    parens = tool_call(default_gateway, "jsonschema_validate", {"schema": {"format": "regex"}, "data": "(" * 5000})
    assert parens.status_code == 400 and parens.json()["error"]["errors"][0]["field"] == "data"
    assert httpx.get(f"{default_gateway}/health", timeout=10).status_code == 200


def test_the_amplifier_through_the_gateway_is_refused_naming_the_replacement(default_gateway: str) -> None:
    text = "x@y.io " * (218_000 // 7)
    response = tool_call(default_gateway, "pii_redact", {"text": text, "replacement": "R" * 8000})
    assert response.status_code == 400, response.text[:500]
    error = response.json()["error"]
    assert error["type"] == "ToolInputError"
    assert [problem["field"] for problem in error["errors"]] == ["replacement"]
    assert "at most 64 characters" in error["message"]
    assert len(response.content) < 10_000
    allowed = tool_call(default_gateway, "pii_redact", {"text": text, "replacement": "R" * 64})
    assert allowed.status_code == 200 and len(allowed.content) < 10 * len(text)


async def test_the_same_calls_over_mcp(default_gateway: str) -> None:
    async with Client(f"{default_gateway}/mcp") as client:
        verdict = await client.call_tool("jsonschema_validate", {"schema": {"pattern": "^(a+)+$"}, "data": EVIL})
        assert not verdict.is_error
        assert json.loads(verdict.content[0].text)["valid"] is False  # type: ignore[union-attr]
        refused = await client.call_tool("pii_redact", {"text": "a@b.cc", "replacement": "R" * 8000})
        assert refused.is_error
        assert "replacement" in refused.content[0].text  # type: ignore[union-attr]
