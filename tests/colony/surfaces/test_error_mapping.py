"""Every ColonyError has an HTTP status and an MCP error code, and survives the trip over the wire."""

from __future__ import annotations

import pytest
from mcp_types import INVALID_PARAMS

import colony.kernel  # noqa: F401 - the kernel's errors are part of the hierarchy
from colony import errors
from colony.surfaces.error_mapping import (
    HTTP_STATUS,
    MCP_ERROR_CODE,
    http_headers,
    http_status,
    mcp_error,
    rebuild_error,
)


def every_colony_error() -> set[type[errors.ColonyError]]:
    found: set[type[errors.ColonyError]] = set()
    pending = [errors.ColonyError]
    while pending:
        cls = pending.pop()
        found.add(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_every_colony_error_is_mapped_explicitly() -> None:
    classes = every_colony_error()
    assert classes - set(HTTP_STATUS) == set(), "add these to HTTP_STATUS"
    assert classes - set(MCP_ERROR_CODE) == set(), "add these to MCP_ERROR_CODE"
    assert all(400 <= status < 600 for status in HTTP_STATUS.values())


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (errors.ToolInputError.for_field("value", "bad"), 400, INVALID_PARAMS),
        (errors.UnknownToolError("nope"), 404, INVALID_PARAMS),
        (errors.AuthenticationError("who"), 401, -32021),
        (errors.CapabilityDeniedError("no", missing=["tool:x"]), 403, -32022),
        (errors.PayloadTooLargeError("big"), 413, -32023),
        (errors.ToolOutputTooLargeError("big", action="a", size_bytes=2, limit_bytes=1), 502, -32005),
        (errors.CallTimeoutError("slow"), 504, -32024),
        (errors.ToolUnavailableError("broken", tool="x", reason="cannot import"), 503, -32006),
        (errors.KernelInputError.for_field("agent_id", "missing"), 400, INVALID_PARAMS),
        (errors.KernelStoreError("locked", retryable=True), 503, -32012),
        (errors.ActionNotExecutedError("held", verdict={"decision": "hold"}), 409, -32026),
        (errors.RateLimitedError("slow down", retry_after_seconds=0.25), 429, -32029),
    ],
)
def test_statuses_and_codes(error: errors.ColonyError, status: int, code: int) -> None:
    assert http_status(error) == status
    data = mcp_error(error)
    assert (data.code, data.message, data.data) == (code, str(error), error.to_dict())


def test_an_unlisted_subclass_falls_back_to_its_parent() -> None:
    class Narrower(errors.ToolInputError):
        pass

    assert http_status(Narrower("x")) == 400


@pytest.mark.parametrize(
    "error",
    [
        errors.ToolInputError.for_field("from_unit", "Unsupported unit: x", expected="km"),
        errors.CapabilityDeniedError("denied", missing=["tool:a", "tool:b"]),
        errors.ActionNotExecutedError("refused", verdict={"decision": "refuse"}),
        errors.UnknownToolError("unknown tool 'x'"),
        errors.ToolExecutionError("broke", retryable=True),
        errors.AuthenticationError("who are you"),
        errors.ToolOutputTooLargeError("too big", action="redact_pii", size_bytes=2_000_000, limit_bytes=1 << 20),
        errors.RateLimitedError("slow down", retry_after_seconds=2.5),
    ],
)
def test_rebuilt_errors_keep_type_message_and_details(error: errors.ColonyError) -> None:
    rebuilt = rebuild_error(error.to_dict(), http_status(error))
    assert type(rebuilt) is type(error)
    assert rebuilt.to_dict() == error.to_dict()


def test_answers_carry_their_headers() -> None:
    assert http_headers(errors.AuthenticationError("who")) == {"www-authenticate": 'Bearer realm="colony"'}
    assert http_headers(errors.RateLimitedError("busy", retry_after_seconds=0.2)) == {"retry-after": "1"}
    assert http_headers(errors.RateLimitedError("slow", retry_after_seconds=12.01)) == {"retry-after": "13"}
    assert http_headers(errors.ToolInputError("bad")) == {}
    for garbage in (None, "soon", float("inf"), -3, True):
        rebuilt = rebuild_error({"type": "RateLimitedError", "message": "m", "retry_after_seconds": garbage}, 429)
        assert isinstance(rebuilt, errors.RateLimitedError) and rebuilt.retry_after_seconds == 1.0


def test_an_answer_that_names_no_known_error_is_a_peer_error() -> None:
    rebuilt = rebuild_error({"type": "Teapot", "message": "short and stout"}, 418)
    assert isinstance(rebuilt, errors.PeerError) and "418" in str(rebuilt)
    assert isinstance(rebuild_error("garbage", 422), errors.ToolInputError)


def sample(cls: type[errors.ColonyError]) -> errors.ColonyError:
    """An instance of ``cls`` with every field its constructor takes set to something recognisable."""
    values: dict[str, object] = {
        "errors": [errors.FieldError(field="f", message="bad", expected="int")],
        "missing": ["tool:x"],
        "verdict": {"decision": "hold", "gate_score": 0.4},
        "retryable": True,
        "action": "convert_units",
        "code": "NoSuchKey",
        "operation": "GetObject",
        "status_code": 409,
        "retry_after_seconds": 2.5,
        "size_bytes": 2_000_000,
        "limit_bytes": 1 << 20,
        "consequence_id": "c-0191",
        "tool": "broken_tool",
        "server": "files",
        "reason": "'broken_tool' (tools.x.Y): cannot import 'tools.x'",
        "policies": ["no-night-shell"],
        "reasons": ["no shell at night"],
        "file": "policies/ops.cedar",
        "line": 3,
    }
    if cls is errors.HPCLimitError:
        return cls(["min_vcpus 64 exceeds max_vcpus 16"])
    if cls is errors.HPCJobFailedError:
        return cls("job-1", "Essential container exited", ["boom"])
    if cls is errors.UnknownApprovalError:
        return cls("0191-approval")
    if cls is errors.ApprovalError:
        return cls("approval 0191 was already approved", approval_id="0191", state="approved")
    import inspect

    accepted = inspect.signature(cls.__init__).parameters
    return cls("what went wrong", **{k: v for k, v in values.items() if k in accepted})  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", sorted(every_colony_error(), key=lambda cls: cls.__name__))
def test_every_error_round_trips_losslessly(cls: type[errors.ColonyError]) -> None:
    error = sample(cls)
    rebuilt = rebuild_error(error.to_dict(), http_status(error))
    assert type(rebuilt) is cls
    assert rebuilt.to_dict() == error.to_dict()
    assert rebuilt.retryable == error.retryable and str(rebuilt) == str(error)
