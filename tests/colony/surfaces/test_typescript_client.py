"""The official TypeScript MCP SDK client against ``colony mcp`` (stdio) and the gateway's /mcp (streamable HTTP).

The SDK client validates every structured result against the tool's output
schema, errors included, and rejects a mismatch with -32602. It lists every
tool and calls each one: the seed's examples, successes, bad arguments, an
unexpected argument, a side-effecting call the gate refuses and one it lets
through; every answer must reach it intact, errors and verdicts readable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from colony.surfaces.portable_schema import portability_problems
from tests.colony.surfaces.seed001 import EXAMPLES, KERNEL_TOOLS
from tests.services.gateway import StartGateway
from tests.services.typescript_client import TypeScriptClient

REPO_ROOT = Path(__file__).resolve().parents[3]
COLONY = str(Path(sys.executable).parent / "colony")
AGENT = "ts-agent"
CASE = {
    "rationale": "Record the outcome of the nightly calibration run for the operators to review",
    "rollback_plan": "Delete the appended line from notes.txt; nothing else is touched",
    "evidence": {"tests": ["tests/colony/surfaces/test_typescript_client.py"]},
}
GOOD_REPORT = {
    "agent_id": AGENT,
    "action_type": "run_tests",
    "target": "colony.notes",
    "actual_outcome": "all tests pass",
    "tests_passed": True,
    "human_feedback": 1.0,
}


def catalog_root(root: Path) -> Path:
    """A repository root whose catalog is the repository's plus ``append_note`` (a side effect the gate judges)."""
    registry = json.loads((REPO_ROOT / ".colony" / "tool-registry.json").read_text())
    registry["tools"].append(
        {
            "name": "append_note",
            "capability": "append_note",
            "capability_fqn": "tests.colony.surfaces.sample_tools.AppendNote",
        }
    )
    (root / ".colony").mkdir(parents=True)
    (root / ".colony" / "tool-registry.json").write_text(json.dumps(registry))
    return root


def plan() -> list[dict[str, Any]]:
    """Every tool called, the failures each tool can answer among them, in an order the gate's checks rely on."""
    calls: list[dict[str, Any]] = [
        {"label": f"seed:{name}", "name": name, "arguments": EXAMPLES[name]["arguments"]} for name in KERNEL_TOOLS
    ]
    calls += [
        {"label": "kernel:missing", "name": "colony_agent_profile", "arguments": {}},
        {
            "label": "kernel:wrong-type",
            "name": "colony_record_outcome",
            "arguments": {**EXAMPLES["colony_record_outcome"]["arguments"], "tests_passed": "yes"},
        },
        {"label": "kernel:bad-plan", "name": "colony_falsify_plan", "arguments": {"plan_json": "{not json"}},
        {"label": "convert", "name": "unit_convert", "arguments": {"value": 100, "from_unit": "c", "to_unit": "f"}},
        {"label": "convert:unit", "name": "unit_convert", "arguments": {"value": 1, "from_unit": "zz", "to_unit": "m"}},
        {
            "label": "convert:unexpected",
            "name": "unit_convert",
            "arguments": {"value": 1, "from_unit": "km", "to_unit": "m", "bogus": True},
        },
        {"label": "summarize", "name": "doc_summarize", "arguments": {"text": "A. B b. B.", "max_sentences": 1}},
        {"label": "summarize:bad", "name": "doc_summarize", "arguments": {"text": "One.", "max_sentences": 0}},
        {
            "label": "validate",
            "name": "jsonschema_validate",
            "arguments": {"schema": {"type": "object", "required": ["a"]}, "data": {"b": None}},
        },
        {"label": "validate:bad", "name": "jsonschema_validate", "arguments": {"schema": {"type": 5}, "data": 1}},
        {"label": "redact", "name": "pii_redact", "arguments": {"text": "mail a@example.com or 555-123-4567"}},
        {
            "label": "shield",
            "name": "mager_sumner_shielding",
            "arguments": {"layers_mm": [1, 1], "relative_permeability": [20000, 20000], "inner_radius_mm": 50},
        },
        {
            "label": "shield:null-gaps",
            "name": "mager_sumner_shielding",
            "arguments": {"layers_mm": [1], "relative_permeability": [20000], "inner_radius_mm": 50, "gaps_mm": None},
        },
        {
            "label": "shield:lengths",
            "name": "mager_sumner_shielding",
            "arguments": {"layers_mm": [1, 2], "relative_permeability": [20000], "inner_radius_mm": 50},
        },
        # Its successful run needs the HPC service (tests/colony/hpc); here, the input error it answers first.
        {"label": "sweep:bad", "name": "fdtd_sweep", "arguments": {"relative_permittivities": []}},
        {"label": "shell:refused", "name": "shell_exec", "arguments": {"script": "echo hi", **CASE}},
        {"label": "note:refused", "name": "append_note", "arguments": {"note": "from a newcomer", **CASE}},
        {"label": "unknown-tool", "name": "no_such_tool", "arguments": {}},
        {"label": "approvals:list", "name": "colony_list_approvals", "arguments": {"state": "pending"}},
        {
            "label": "approvals:unknown",
            "name": "colony_decide_approval",
            "arguments": {"approval_id": "no-such-approval", "approve": True, "note": "ok"},
        },
    ]
    calls += [{"label": f"trust:{n}", "name": "colony_record_outcome", "arguments": GOOD_REPORT} for n in range(3)]
    calls.append({"label": "note:executed", "name": "append_note", "arguments": {"note": "calibration ok", **CASE}})
    return calls


def by_label(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {call["label"]: call for call in report["calls"]}


def answer(call: dict[str, Any]) -> Any:
    """The JSON a call's result carries as text (what a model reads)."""
    assert "error" not in call, f"{call['label']}: the SDK client rejected the answer: {call['error']}"
    return json.loads(call["result"]["content"][0]["text"])


def failure(call: dict[str, Any]) -> dict[str, Any]:
    """A failed call's error body, checked to be readable and to carry no contradicting structured content."""
    body = answer(call)
    assert call["result"]["isError"] is True, call
    assert {"error", "type", "code", "retryable"} <= set(body), body
    assert isinstance(body["error"], str) and body["error"]
    expected = {"error": body["error"]} if call["name"] in KERNEL_TOOLS else None
    assert call["result"].get("structuredContent") == expected
    return body


def check_listing(report: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert set(KERNEL_TOOLS) | {"unit_convert", "shell_exec", "fdtd_sweep", "append_note"} <= set(tools)
    assert {call["name"] for call in report["calls"]} >= set(tools), "every listed tool is called"
    for name, tool in tools.items():
        assert tool["title"] and tool["annotations"]["title"] == tool["title"], name
        assert tool["_meta"]["colony/version"] and len(tool["_meta"]["colony/definition_sha256"]) == 64, name
        assert portability_problems(tool["inputSchema"]) == [], name
        assert portability_problems(tool.get("outputSchema") or {"type": "object"}) == [], name
        if not name.startswith("colony_"):
            assert "agent_id" not in tool["inputSchema"]["properties"], name
    assert tools["colony_status"]["title"] == "Colony status"
    assert tools["colony_tick"]["_meta"]["colony/version"] == "1.3.1"
    assert tools["colony_propose_action"]["annotations"]["readOnlyHint"] is False


def check_calls(report: dict[str, Any], notes: Path) -> None:
    calls = by_label(report)
    rejected = {label: call["error"] for label, call in calls.items() if "error" in call}
    assert set(rejected) == {"unknown-tool"}, rejected  # only an unknown tool is a protocol error
    assert "output schema" not in json.dumps(report["calls"])
    assert "unknown tool 'no_such_tool'" in rejected["unknown-tool"]["message"]

    assert answer(calls["seed:colony_propose_action"]) == EXAMPLES["colony_propose_action"]["result"]
    for name in KERNEL_TOOLS:
        assert calls[f"seed:{name}"]["result"]["isError"] is False, name

    missing = failure(calls["kernel:missing"])
    assert (missing["type"], missing["code"]) == ("KernelInputError", -32602)
    assert [error["field"] for error in missing["errors"]] == ["agent_id"]
    assert "tests_passed" in failure(calls["kernel:wrong-type"])["error"]
    assert "plan_json" in failure(calls["kernel:bad-plan"])["error"]

    assert answer(calls["convert"]) == {"value": 212.0, "from_unit": "c", "to_unit": "f"}
    assert calls["convert"]["result"]["structuredContent"] == {"value": 212.0, "from_unit": "c", "to_unit": "f"}
    unit = failure(calls["convert:unit"])
    assert (unit["error"], unit["type"], unit["code"]) == ("Unsupported unit: zz", "ToolInputError", -32602)
    assert [error["field"] for error in unit["errors"]] == ["from_unit"]
    unexpected = failure(calls["convert:unexpected"])
    assert [error["field"] for error in unexpected["errors"]] == ["bogus"]

    assert answer(calls["summarize"])["summary_sentences"] == 1
    assert [error["field"] for error in failure(calls["summarize:bad"])["errors"]] == ["max_sentences"]
    assert answer(calls["validate"])["valid"] is False
    assert [error["field"] for error in failure(calls["validate:bad"])["errors"]] == ["schema"]
    assert answer(calls["redact"])["redacted_text"] == "mail [REDACTED] or [REDACTED]"
    assert answer(calls["shield"])["shielding_factor"] > answer(calls["shield:null-gaps"])["shielding_factor"] > 1
    assert failure(calls["shield:lengths"])["type"] == "ToolInputError"
    assert failure(calls["sweep:bad"])["errors"][0]["field"] == "relative_permittivities"

    for label in ("shell:refused", "note:refused"):
        refused = failure(calls[label])
        assert (refused["type"], refused["code"]) == ("ActionNotExecutedError", -32026)
        assert refused["verdict"]["decision"] == "refuse"
        assert refused["verdict"]["reason"] == "SANDBOX role: no write-path gate passes"
        assert "refuse" in refused["error"] and refused["verdict"]["reason"] in refused["error"]

    listed = calls["approvals:list"]["result"]
    assert listed["isError"] is False and listed["structuredContent"] == {"approvals": []}
    unknown = failure(calls["approvals:unknown"])
    assert (unknown["type"], unknown["approval_id"]) == ("UnknownApprovalError", "no-such-approval")

    assert answer(calls["trust:2"])["role"] == "repair_ant"
    executed = calls["note:executed"]["result"]
    assert executed["isError"] is False and executed["structuredContent"] == answer(calls["note:executed"])
    assert executed["structuredContent"]["verdict"]["decision"] == "execute"
    assert executed["structuredContent"]["result"]["notes"] == 1
    assert executed["structuredContent"]["outcome"]["status"] == "recorded"
    assert notes.read_text() == "calibration ok\n"


def test_every_tool_over_stdio(typescript_client: TypeScriptClient, tmp_path: Path) -> None:
    root, home = catalog_root(tmp_path / "repo"), tmp_path / "home"
    home.mkdir()
    env = {"COLONY_HOME": str(home), "COLONY_REPO_ROOT": str(root), "PYTHONPATH": str(REPO_ROOT)}
    report = typescript_client.run(plan(), tmp_path, stdio=[COLONY, "mcp", "--agent", AGENT], env=env)
    assert report["server"]["name"] == "colony"
    check_calls(report, home / "notes.txt")
    check_listing(report)


def test_every_tool_over_streamable_http(
    typescript_client: TypeScriptClient, start_gateway: StartGateway, tmp_path: Path
) -> None:
    root, home = catalog_root(tmp_path / "repo"), tmp_path / "home"
    home.mkdir()
    url = start_gateway(COLONY_HOME=str(home), COLONY_REPO_ROOT=str(root))
    report = typescript_client.run(plan(), tmp_path, url=f"{url}/mcp", headers={"X-Colony-Agent": AGENT})
    check_calls(report, home / "notes.txt")
    check_listing(report)
