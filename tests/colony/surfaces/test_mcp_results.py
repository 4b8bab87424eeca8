"""What tools/call answers: one readable error shape, and no structured content a schema does not declare."""

from __future__ import annotations

import json

import pytest

from colony import errors
from colony.runtime import Acting, CallOutcome, CallStatus
from colony.surfaces.mcp.results import catalog_result, error_body, error_result, kernel_error_result, value_result

VERDICT = {"decision": "refuse", "gate_score": 0.0, "reason": "SANDBOX role: no write-path gate passes"}


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            errors.ToolInputError.for_field("from_unit", "Unsupported unit: zz", expected="a known unit"),
            {
                "error": "Unsupported unit: zz",
                "type": "ToolInputError",
                "code": -32602,
                "retryable": False,
                "action": None,
                "errors": [{"field": "from_unit", "message": "Unsupported unit: zz", "expected": "a known unit"}],
            },
        ),
        (
            errors.ActionNotExecutedError("the gate answered refuse for shell_exec", verdict=VERDICT),
            {
                "error": "the gate answered refuse for shell_exec",
                "type": "ActionNotExecutedError",
                "code": -32026,
                "retryable": False,
                "verdict": VERDICT,
            },
        ),
        (
            errors.CapabilityDeniedError("no grant", missing=["tool:x"]),
            {
                "error": "no grant",
                "type": "CapabilityDeniedError",
                "code": -32022,
                "retryable": False,
                "missing": ["tool:x"],
            },
        ),
        (
            errors.KernelStoreError("database is locked", retryable=True),
            {"error": "database is locked", "type": "KernelStoreError", "code": -32012, "retryable": True},
        ),
    ],
)
def test_one_error_shape_for_every_tool(error: errors.ColonyError, expected: dict[str, object]) -> None:
    assert error_body(error) == expected
    catalog = error_result(error)
    assert catalog.is_error and catalog.structured_content is None
    assert json.loads(catalog.content[0].text) == expected  # type: ignore[union-attr]
    kernel = kernel_error_result(error)
    assert kernel.is_error and kernel.structured_content == {"error": expected["error"]}
    assert json.loads(kernel.content[0].text) == expected  # type: ignore[union-attr]


def test_values_and_governed_answers() -> None:
    listed = value_result([{"strength": 1.0}])
    assert listed.structured_content is None and not listed.is_error
    assert json.loads(listed.content[0].text) == [{"strength": 1.0}]  # type: ignore[union-attr]
    assert value_result({"value": 2.0}).structured_content == {"value": 2.0}
    governed = catalog_result(outcome(result={"notes": 1}, verdict={"decision": "execute"}))
    assert governed.structured_content == {"verdict": {"decision": "execute"}, "result": {"notes": 1}}
    recorded = outcome(result=None, verdict={"decision": "execute"}, record={"status": "recorded"})
    assert catalog_result(recorded).structured_content == {
        "verdict": {"decision": "execute"},
        "result": None,
        "outcome": {"status": "recorded"},
    }
    assert catalog_result(outcome(result="text")).structured_content is None
    assert catalog_result(outcome(result={"value": 1.0})).structured_content == {"value": 1.0}


def outcome(**fields: object) -> CallOutcome:
    acting = Acting(agent_id="results-agent")
    return CallOutcome(status=CallStatus.EXECUTED, tool="t", version="1.0.0", action="a", acting=acting, **fields)  # type: ignore[arg-type]
